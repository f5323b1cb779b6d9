"""The gpu16 emulator from Python: assemble, disassemble, run and generate programs.

This module is the Python face of the Rust extension ``gpu16._native``, which calls the same
library code as the ``gpu16`` command line: ``run`` returns exactly the object that
``gpu16 run --json`` prints, built by the same Rust function. python/README.md documents the
API.

An argument of the wrong type raises ``TypeError``, and one out of its range ``ValueError``,
whose message starts with the argument's name: ``backend: expected str, got int``,
``cycles: must be >= 0, got -1``. A ``bool`` is not taken for an int.
"""

import json as _json
import os as _os
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._native import AssemblyError, LoadError

__version__ = _native.__version__
"""The version of the gpu16 library this package was built from (``gpu16 --version``)."""

__all__ = [
    "AssemblyError",
    "LoadError",
    "Machine",
    "__version__",
    "assemble",
    "disassemble",
    "generate",
    "generate_image",
    "load_memory",
    "run",
]

Memory = Union[bytes, bytearray, str, "_os.PathLike[str]"]
"""A shared-memory image: ``bytes`` (raw, or ``$readmemh`` text, told by their content), a
``$readmemh`` text as ``str``, or a path."""


def load_memory(path: "Union[str, _os.PathLike[str]]", memory_format: Optional[str] = None) -> bytes:
    """The 4096 bytes of the memory file at ``path``, read as ``gpu16 run --mem`` reads it.

    ``memory_format`` is ``"hex"`` (``$readmemh`` text) or ``"raw"`` (bytes); without it the
    extension decides (``.hex``, ``.mem``, ``.vmem``, ``.txt`` are text, ``.bin``, ``.raw``
    raw), else the content: text that parses as ``$readmemh`` is text, anything else raw,
    and text that does not parse raises ``LoadError`` naming ``memory_format=``. Memory
    past the image is zero.
    """
    return _native.load_memory(path, memory_format)


def assemble(source: str, name: str = "<string>", dialect: str = "spec") -> bytes:
    """The program image (N x 32 bytes) of assembly ``source``, as ``gpu16 asm`` writes it.

    ``name`` is the file name diagnostics give (and ``.include`` paths are relative to its
    directory); ``dialect`` is ``spec`` or ``mcst`` (``--dialect``). Raises
    ``AssemblyError`` (a ``ValueError``) whose message is the assembler's diagnostics, as
    ``gpu16 asm`` prints them, and ``LoadError`` for a source past the CLI's 16 MiB limit.
    """
    return _native.assemble(source, name, dialect)


def disassemble(image: Union[bytes, bytearray], dialect: str = "spec") -> str:
    """The source ``gpu16 disasm --dialect DIALECT`` prints for a program ``image``.

    Raises ``LoadError`` for an image that does not load in ``dialect``.
    """
    return _native.disassemble(image, dialect)


def run(
    program: Union[bytes, bytearray, str],
    memory: Optional[Memory] = None,
    backend: str = "auto",
    dialect: str = "spec",
    timing: Optional[str] = None,
    issue: str = "in-order",
    bank_conflicts: bool = False,
    max_cycles: Optional[int] = None,
    *,
    name: str = "<string>",
    memory_format: Optional[str] = None,
    tasks: str = "all",
) -> Dict[str, Any]:
    """Run ``program`` and return the object ``gpu16 run --json`` prints, as a dict.

    ``program`` is a binary image (``bytes``) or assembly source (``str``, named ``name``
    in diagnostics and in the ``location`` of a failure). ``memory`` is the initial shared
    memory, zero past its end (``None``: the source's ``.data`` bytes, else zeros). It is
    read by the CLI's one rule for memory images: ``memory_format`` (``"hex"`` or ``"raw"``)
    if given; else a ``str`` is a ``$readmemh`` text; ``bytes`` (or ``bytearray``) have no
    name, so their content decides, as for ``gpu16 run --mem -``: bytes that are not text
    are a raw image (at most 4096), text that parses as ``$readmemh`` is that text, and
    other text raises ``LoadError`` naming ``memory_format=``; a path (``os.PathLike``, e.g.
    ``pathlib.Path``) is a file read as ``load_memory`` reads it. ``backend`` is ``interp``,
    ``jit`` or ``auto``; ``dialect`` is ``spec`` or ``mcst``; ``issue`` is ``in-order`` or
    ``lookahead``; ``timing`` is a ``--timing`` value such as ``"cf=3,broadcast=2"`` or
    ``"mcst-rtl"`` (with ``dialect="mcst"``); ``max_cycles`` is the watchdog (default 2**32).
    ``tasks`` is how much of the task timeline the dict keeps, as ``--tasks`` says:
    ``"all"`` (every task under ``tasks``), ``"summary"`` (``task_summary`` only) or
    ``"none"`` (counts only). Every task is a dict, so a long run (an mcst program that
    never halts issues tasks until the watchdog) wants ``"summary"``: with ``"all"``, an
    mcst run stops with ``task_log_full`` at 2**22 tasks, as ``gpu16 run`` does.

    A run that fails (a fault, the watchdog, a livelock) is not an exception: the dict has
    an ``error`` object, as in ``run --json``. A program that does not assemble raises
    ``AssemblyError``; an input that cannot be loaded raises ``LoadError``; an unknown
    option value raises ``ValueError`` naming the accepted values.
    """
    text = _native.run_json(
        program,
        memory,
        backend,
        dialect,
        timing,
        issue,
        bank_conflicts,
        max_cycles,
        name,
        memory_format,
        tasks,
    )
    return _json.loads(text)


def generate(seed: int, profile: str = "mixed", groups: int = 3, dialect: str = "spec") -> str:
    """The source of the program ``gpu16 gen --seed SEED --profile PROFILE`` generates.

    ``gpu16 gen`` writes a binary image; this is that image as ``gpu16 disasm`` prints it,
    which assembles back to the same bytes. ``profile`` is one of ``alu``, ``memory``,
    ``atomics``, ``scheduler``, ``mixed``, ``private``; ``groups`` is 1 to 65536 as for
    ``--groups``.
    ``generate_image`` gives the image and its memory image as bytes. With
    ``dialect="mcst"`` the program is an mcst program (at most 12 groups, ending with
    ``.halt``), as ``gpu16 gen --dialect mcst`` writes it.
    """
    return _native.generate(seed, profile, groups, dialect)


def generate_image(
    seed: int, profile: str = "mixed", groups: int = 3, dialect: str = "spec"
) -> "tuple[bytes, bytes]":
    """The (program image, memory image) ``gpu16 gen -o OUT --mem-out MEM`` writes."""
    return _native.generate_image(seed, profile, groups, dialect)


class Machine:
    """A run that pauses between cycles, for a testbench that steps the model beside a
    device (an RTL simulation under cocotb, say), reads its state and writes its memory.

    The arguments are ``run``'s. The machine starts paused as cycle 0 begins. While
    paused as cycle N begins, every instruction of the cycles before N has executed and
    none of N or later, exactly the state ``run(..., max_cycles=N)`` stops in. Pausing
    changes nothing: stepping to the end gives ``run``'s report exactly, in both dialects.
    A run that faults reports the state as the fault's cycle began, with the memory the
    testbench wrote (the writes are replayed at their cycles to take it).
    """

    def __init__(
        self,
        program: Union[bytes, bytearray, str],
        memory: Optional[Memory] = None,
        backend: str = "auto",
        dialect: str = "spec",
        timing: Optional[str] = None,
        issue: str = "in-order",
        bank_conflicts: bool = False,
        max_cycles: Optional[int] = None,
        *,
        name: str = "<string>",
        memory_format: Optional[str] = None,
        tasks: str = "all",
    ) -> None:
        self._m = _native.Machine(
            program,
            memory,
            backend,
            dialect,
            timing,
            issue,
            bank_conflicts,
            max_cycles,
            name,
            memory_format,
            tasks,
        )

    def step(self, cycles: int = 1) -> str:
        """Run ``cycles`` more cycles (an int, 0 or more), or to the end of the run if it
        comes first. Returns ``"paused"``, ``"ended"`` or ``"failed"`` (a fault, the
        watchdog, a livelock)."""
        return self._m.step(cycles)

    def run(self, until_cycle: Optional[int] = None) -> str:
        """Run until cycle ``until_cycle`` (an int, 0 or more) begins (a cycle already
        passed does nothing), or with ``None`` to the end of the run. Returns the status,
        as ``step`` does."""
        return self._m.run_until(until_cycle)

    def go_back(self, cycle: int) -> str:
        """Go back to where the run stood as cycle ``cycle`` begins, exactly the state a
        machine run to ``cycle`` from the start stands in, and return the status there, as
        ``step`` does. The machine keeps snapshots of the run as it moves (from every
        4,096 cycles at first, wider apart as the run grows: at most 64 of them and 64 MiB),
        so going back re-runs at most one spacing, not the run from its start. A finished
        run goes back too, to the cycle it ended at (its ``cycle``) at most. The
        testbench's writes at ``cycle`` or later are undone; those before it are replayed
        at their cycles. Events not yet taken with ``events()`` are dropped; moving on
        reports the cycles from ``cycle`` again. Raises ``ValueError`` for a ``cycle``
        that is not before the one the machine is paused at, and under the mcst dialect,
        which keeps no snapshots."""
        return self._m.go_back(cycle)

    @property
    def cycle(self) -> int:
        """The cycle the machine is paused at (the next to run); once finished, the run's
        length in cycles (``report()["cycles"]``)."""
        return self._m.cycle

    @property
    def finished(self) -> bool:
        """Whether the run is over (ended, or failed)."""
        return self._m.finished

    @property
    def registers(self) -> List[List[int]]:
        """Every core's registers: ``registers[core][r]``, 16 x 16 ints."""
        return self._m.registers()

    @property
    def memory(self) -> bytes:
        """The 4096 bytes of shared memory, by byte address (bank in the high four bits,
        row in the low eight), as ``report()["memory"]`` lists them."""
        return self._m.memory()

    def write_memory(self, addr: int, data: Union[bytes, bytearray]) -> None:
        """Write ``data`` (``bytes`` or ``bytearray``) at byte address ``addr`` (0 to 4095)
        before the cycle the machine is paused at: the testbench's write, not a core's
        access (it takes no lock, counts as no access and wakes no core). Raises
        ``ValueError`` for an ``addr`` out of range (``addr: must be in 0..4096, got -1``),
        ``data`` that runs past the 4096 bytes, or once the run is over, and ``TypeError``
        for other types."""
        self._m.write_memory(addr, data)

    @property
    def locks(self) -> List[Dict[str, int]]:
        """The open atomic sequences: ``{"bank", "core", "addr"}`` each (``core`` holds the
        lock of byte ``addr``). Empty under the mcst dialect, which has none."""
        return _json.loads(self._m.locks_json())

    @property
    def cores(self) -> List[Dict[str, Any]]:
        """The 16 cores, each ``{"core", "state"}``: ``idle`` (no task part), or
        ``running``, ``not_started`` (with ``start``), ``stalled`` on a lock (with
        ``addr``, ``holder``, ``since``) or ``bank_conflict``, with its ``frame`` and
        ``ip``, as ``run``'s ``error`` lists unfinished cores."""
        return _json.loads(self._m.cores_json())

    def events(self) -> List[Dict[str, Any]]:
        """The run's events since the last call, each a dict with ``kind``
        (``control_frame``, ``broadcast``, ``scheduler_wait``, ``core_part``,
        ``lock_held``, ``stall``) and its cycles and fields. Each backend reports the same
        events, in an order of its own: sort them to compare backends. At most 2**20 are
        kept between calls; more raise nothing, and ``events_dropped`` counts them."""
        d = _json.loads(self._m.events_json())
        self.events_dropped = d["dropped"]
        return d["events"]

    events_dropped: int = 0
    """Events left out of the last ``events()`` for the limit."""

    def report(self) -> Dict[str, Any]:
        """The dict ``run`` returns: for the whole run once finished; while paused, the
        state so far, with ``cycles`` the cycle paused at and no ``error``."""
        return _json.loads(self._m.report_json())
