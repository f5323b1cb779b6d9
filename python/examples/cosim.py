"""A cocotb-style co-simulation: step the gpu16 model beside a device, one cycle at a
time, and at each task end compare the registers of the cores whose part ended; at the
end of the run, compare shared memory too.

The device is any object with three methods:
- ``step()``: advance one clock cycle;
- ``registers(core)``: that core's 16 registers, as a list of ints;
- ``memory()``: its 4096 bytes of shared memory.

In a cocotb test, ``step`` would ``await RisingEdge(dut.clk)`` and the two reads would go
through the DUT's debug ports; the model side is unchanged. Here the stand-in device is
a second model (``ModelDevice``), on another backend, which a test can make misbehave.

Run it on a program to co-simulate the model on ``auto`` against the interpreter:

    python cosim.py PROGRAM.s [--mem MEMORY] [--mem-format hex|raw]

Without ``--mem`` both start from the program's ``.data`` (zeros without one), as
``gpu16 run`` does. It prints one line per divergence and exits 1 if there is any; an input
it cannot use (a memory file it cannot read, a program that does not assemble) is an error
on stderr and exit status 2.
"""

import argparse
import os
import sys
from typing import List, NamedTuple, Optional, Union

import gpu16


class Divergence(NamedTuple):
    """Where the device left the model: at the start of ``cycle``, ``what`` (``r5`` of
    ``core``, or ``memory[addr]`` with ``core`` None) was ``expected`` in the model and
    ``actual`` in the device."""

    cycle: int
    core: Optional[int]
    what: str
    expected: int
    actual: int


class ModelDevice:
    """A device that is itself a gpu16 model (a stand-in for an RTL simulation). ``memory``
    and ``memory_format`` are ``gpu16.Machine``'s (``None``: the program's ``.data``)."""

    def __init__(self, program: Union[bytes, str], memory: Optional[bytes] = None,
                 backend: str = "interp", memory_format: Optional[str] = None):
        self.machine = gpu16.Machine(program, memory, backend=backend,
                                     memory_format=memory_format)

    def step(self) -> None:
        self.machine.step(1)

    def registers(self, core: int) -> List[int]:
        return self.machine.registers[core]

    def memory(self) -> bytes:
        return self.machine.memory


def cosimulate(
    program: Union[bytes, str],
    device,
    memory: Optional[bytes] = None,
    backend: str = "auto",
    max_cycles: int = 10_000_000,
    memory_format: Optional[str] = None,
) -> List[Divergence]:
    """Step the model and ``device`` together until the model's run is over (or
    ``max_cycles``), comparing at each task end; returns every divergence found. The model
    starts from ``memory``, read as ``gpu16.Machine`` reads it (``None``: the program's
    ``.data``, else zeros)."""
    model = gpu16.Machine(program, memory, backend=backend, memory_format=memory_format)
    found: List[Divergence] = []
    while not model.finished and model.cycle < max_cycles:
        model.step(1)
        device.step()
        for event in model.events():
            if event["kind"] != "core_part":
                continue
            core = event["core"]
            expected, actual = model.registers[core], list(device.registers(core))
            for r, (e, a) in enumerate(zip(expected, actual)):
                if e != a:
                    found.append(Divergence(model.cycle, core, f"r{r}", e, a))
    expected, actual = model.memory, bytes(device.memory())
    for addr, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            found.append(Divergence(model.cycle, None, f"memory[{addr:#05x}]", e, a))
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog=os.path.basename(__file__),
                                     description=__doc__.splitlines()[0])
    parser.add_argument("program", help="an assembly source (.s) or a program image")
    parser.add_argument("--mem", help="the initial shared memory (as gpu16 run --mem); "
                        "without it, the program's .data (else zeros)")
    parser.add_argument("--mem-format", choices=["hex", "raw"],
                        help="how to read --mem, whatever its name (as gpu16 run "
                        "--mem-format)")
    args = parser.parse_args(argv)
    try:
        with open(args.program, "rb") as f:
            data = f.read()
        program: Union[bytes, str] = data.decode() if args.program.endswith(".s") else data
        memory = None
        if args.mem:
            try:
                memory = gpu16.load_memory(args.mem, args.mem_format)
            except ValueError as e:
                # gpu16 names its argument, memory_format=; here --mem-format gives it.
                raise ValueError(str(e).replace("memory_format=", "--mem-format")) from None
        # Read above: both models take the 4096 bytes as they are.
        device = ModelDevice(program, memory, memory_format="raw")
        found = cosimulate(program, device, memory, memory_format="raw")
    except (ValueError, TypeError, OSError) as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    for d in found:
        where = f"core {d.core} {d.what}" if d.core is not None else d.what
        print(f"cycle {d.cycle}: {where}: model {d.expected:#04x}, device {d.actual:#04x}")
    print("pass" if not found else f"{len(found)} divergence(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
