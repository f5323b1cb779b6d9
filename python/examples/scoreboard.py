"""A scoreboard in the style of a cocotb testbench: after each program, compare a device's
shared memory with the gpu16 model's and report every byte that differs by its address,
bank, row, expected (model) and actual (device) value.

The device is whatever gives back its 4096 bytes of shared memory after a program ran:
- a callable ``device(program, memory) -> bytes`` (or a path to a dump file): in a cocotb
  test it would load the program into the DUT, run it and read the memory back over the
  bus; here a test can pass the model itself, or a function reading a dump. ``memory`` is
  what ``check`` was given: ``None`` means the program's own (its ``.data``, else zeros);
- a path to a dump file, read as ``gpu16 run --expect-mem`` reads one (``gpu16.load_memory``):
  raw bytes such as ``gpu16 run --dump-mem`` writes (at most 4096, zero past the end), or a
  ``$readmemh``/``$writememh`` text (``.hex``, ``.mem``, ``.vmem``, ``.txt``, or text content
  under another name) as a simulation writes.

Nothing here needs cocotb. In a cocotb test, the coroutine driving the DUT would call
``scoreboard.check(program, memory, actual=await read_memory(dut))`` after each program
and ``assert scoreboard.passed`` at the end.

Run it from the command line on a program and a dump:

    python scoreboard.py PROGRAM.s DUMP [--mem MEMORY] [--mem-format hex|raw]
                         [--dump-format hex|raw] [--backend interp]

Without ``--mem`` the model starts from the program's ``.data`` (zeros without one), as
``gpu16 run`` does. It prints one line per differing byte and exits 1 if any differs; an
input it cannot use (a memory file or dump it cannot read, a program that does not
assemble, a bad option value) is an error on stderr and exit status 2.
"""

import argparse
import os
import sys
from typing import Callable, List, NamedTuple, Optional, Union

import gpu16

MEMORY_BYTES = 4096

Program = Union[bytes, str]
Memory = Union[bytes, bytearray, str, "os.PathLike[str]"]
Actual = Union[bytes, bytearray, str, "os.PathLike[str]"]
Device = Callable[[Program, Optional[Memory]], Actual]


class Mismatch(NamedTuple):
    """One byte of shared memory where the device and the model disagree. Address A is in
    bank A[11:8] and row A[7:0] (docs/semantics.md, section 1)."""

    address: int
    bank: int
    row: int
    expected: int
    actual: int

    def __str__(self) -> str:
        return (f"address 0x{self.address:03x} (bank {self.bank}, row 0x{self.row:02x}): "
                f"expected 0x{self.expected:02x}, actual 0x{self.actual:02x}")


def memory_of(actual: Actual) -> bytes:
    """A device's memory: the bytes themselves (all 4096 of them), or a dump file read by
    the model's one rule for memory images (``gpu16.load_memory``), which raises
    ``gpu16.LoadError``, a ``ValueError``, for a file it cannot read."""
    if isinstance(actual, (bytes, bytearray)):
        data = bytes(actual)
        if len(data) != MEMORY_BYTES:
            raise ValueError(f"the device's memory: {len(data)} bytes, not the "
                             f"{MEMORY_BYTES} of shared memory")
        return data
    return gpu16.load_memory(os.fspath(actual))


def compare(expected: bytes, actual: bytes) -> List[Mismatch]:
    """Every address where `actual` differs from `expected`, in address order."""
    return [Mismatch(a, a >> 8, a & 0xFF, e, x)
            for a, (e, x) in enumerate(zip(expected, actual)) if e != x]


class Scoreboard:
    """Checks a device against the gpu16 model, one program at a time, and keeps a tally.

    ``device`` is a callable ``(program, memory) -> bytes or dump path``, a dump path, or
    None when every ``check`` is given its ``actual``. ``run_options`` go to ``gpu16.run``
    (``backend``, ``issue``, ``timing``, ``memory_format``, ...) so the model runs as the
    device is set up. ``log`` receives each line of the report.
    """

    def __init__(self, device: Union[Device, Actual, None] = None,
                 log: Callable[[str], None] = print, **run_options):
        self.device = device
        self.log = log
        self.run_options = run_options
        self.checked = 0
        self.failures: List[tuple] = []

    def expected(self, program: Program, memory: Optional[Memory] = None) -> bytes:
        """The model's shared memory after `program` runs from `memory`, which
        ``gpu16.run`` reads (``None``: the program's ``.data``, else zeros). A run that
        fails (a fault, the watchdog) is a test failure, not something to compare."""
        report = gpu16.run(program, memory, **self.run_options)
        if "error" in report:
            raise AssertionError(f"the model's run failed: {report['error']['message']}")
        return bytes.fromhex(report["memory"])

    def actual(self, program: Program, memory: Optional[Memory]) -> bytes:
        """The device's shared memory after it ran `program`."""
        if self.device is None:
            raise ValueError("no device: give check() the actual memory")
        if callable(self.device):
            return memory_of(self.device(program, memory))
        return memory_of(self.device)

    def check(self, program: Program, memory: Optional[Memory] = None,
              actual: Optional[Actual] = None, label: Optional[str] = None) -> List[Mismatch]:
        """Run `program` on the model from `memory` (``None``: the program's ``.data``, as
        ``gpu16.run`` takes it) and compare with the device (or with `actual`, bytes or a
        dump path). Logs and returns the mismatches; an empty list is a pass."""
        self.checked += 1
        label = label or f"program {self.checked}"
        want = self.expected(program, memory)
        got = memory_of(actual) if actual is not None else self.actual(program, memory)
        mismatches = compare(want, got)
        if mismatches:
            self.failures.append((label, mismatches))
            self.log(f"{label}: FAIL, {len(mismatches)} byte(s) differ")
            for m in mismatches:
                self.log(f"  {m}")
        else:
            self.log(f"{label}: pass")
        return mismatches

    @property
    def passed(self) -> bool:
        """Whether every program checked so far matched."""
        return not self.failures

    def summary(self) -> str:
        """One line: how many programs were checked and how many differed."""
        return f"{self.checked} program(s) checked, {len(self.failures)} failed"


def load(path: str, memory_format: Optional[str], option: str) -> bytes:
    """The memory file at `path`, read by ``gpu16.load_memory``. Its error names the API's
    argument (``memory_format=``); here the script's `option` gives that argument."""
    try:
        return gpu16.load_memory(path, memory_format)
    except ValueError as e:
        raise ValueError(str(e).replace("memory_format=", option)) from None


def main(argv: Optional[List[str]] = None) -> int:
    """Compare a dump file with the model's memory after a program; status 1 on a mismatch,
    2 (with the error on stderr, no traceback) on an input or option gpu16 refuses."""
    p = argparse.ArgumentParser(
        prog=os.path.basename(__file__),
        description="Compare a device's memory dump with the gpu16 model's memory after a program.")
    p.add_argument("program", help="assembly source (.s, .asm) or a binary image")
    p.add_argument("dump", help="the device's shared memory after the run: raw bytes or a "
                   "$readmemh text, read as gpu16 run --expect-mem reads it")
    p.add_argument("--mem", help="initial shared memory, read as gpu16 run --mem reads it: "
                   "$readmemh text (.hex, .mem, .vmem, .txt) or raw bytes (.bin, .raw), else "
                   "by its content; without it, the program's .data (else zeros)")
    p.add_argument("--mem-format", choices=["hex", "raw"],
                   help="how to read --mem, whatever its name (as gpu16 run --mem-format)")
    p.add_argument("--dump-format", choices=["hex", "raw"],
                   help="how to read DUMP, whatever its name (as gpu16 run "
                   "--expect-mem-format)")
    p.add_argument("--backend", default="auto", help="interp, jit or auto")
    args = p.parse_args(argv)
    try:
        if args.program.endswith((".s", ".asm")):
            with open(args.program, encoding="utf-8") as f:
                program: Program = f.read()
        else:
            with open(args.program, "rb") as f:
                program = f.read()
        # Read here, each with its own option for the format; the model then takes the
        # 4096 bytes as they are.
        memory = load(args.mem, args.mem_format, "--mem-format") if args.mem else None
        dump = load(args.dump, args.dump_format, "--dump-format")
        board = Scoreboard(dump, backend=args.backend, name=args.program, memory_format="raw")
        board.check(program, memory, label=args.program)
    except (ValueError, TypeError, OSError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    print(board.summary())
    return 0 if board.passed else 1


if __name__ == "__main__":
    sys.exit(main())
