"""Argument errors: every public function and method checks the type (and range) of each
argument itself, so its TypeError or ValueError starts with the argument's name, as the
Python API calls it (not a message of the binding layer, an OverflowError, or a wrapped
negative number). The messages are written out here by hand."""

import pathlib

import pytest

import gpu16

SOURCE = ".cf mask=1\n.if\n    ready\n"


def machine():
    return gpu16.Machine(SOURCE, backend="interp")


# (call, exception type, the whole message)
CASES = [
    # assemble
    (lambda: gpu16.assemble(b"x"), TypeError, "source: expected str, got bytes"),
    (lambda: gpu16.assemble(5), TypeError, "source: expected str, got int"),
    (lambda: gpu16.assemble(SOURCE, name=5), TypeError, "name: expected str, got int"),
    (lambda: gpu16.assemble(SOURCE, dialect=None), TypeError,
     "dialect: expected str, got NoneType"),
    # disassemble
    (lambda: gpu16.disassemble("str"), TypeError,
     "image: expected bytes or bytearray, got str"),
    (lambda: gpu16.disassemble([0] * 32), TypeError,
     "image: expected bytes or bytearray, got list"),
    (lambda: gpu16.disassemble(b"", dialect=1), TypeError, "dialect: expected str, got int"),
    # run
    (lambda: gpu16.run(SOURCE, backend=3), TypeError, "backend: expected str, got int"),
    (lambda: gpu16.run(SOURCE, dialect=b"spec"), TypeError,
     "dialect: expected str, got bytes"),
    (lambda: gpu16.run(SOURCE, timing=5), TypeError, "timing: expected str or None, got int"),
    (lambda: gpu16.run(SOURCE, issue=0), TypeError, "issue: expected str, got int"),
    (lambda: gpu16.run(SOURCE, bank_conflicts="yes"), TypeError,
     "bank_conflicts: expected bool, got str"),
    (lambda: gpu16.run(SOURCE, bank_conflicts=1), TypeError,
     "bank_conflicts: expected bool, got int"),
    (lambda: gpu16.run(SOURCE, max_cycles="10"), TypeError,
     "max_cycles: expected int or None, got str"),
    (lambda: gpu16.run(SOURCE, max_cycles=10.0), TypeError,
     "max_cycles: expected int or None, got float"),
    (lambda: gpu16.run(SOURCE, max_cycles=True), TypeError,
     "max_cycles: expected int or None, got bool"),
    (lambda: gpu16.run(SOURCE, max_cycles=-1), ValueError,
     "max_cycles: -1 is not in 0..=288230376151711744"),
    (lambda: gpu16.run(SOURCE, max_cycles=2**64), ValueError,
     "max_cycles: 18446744073709551616 is not in 0..=288230376151711744"),
    (lambda: gpu16.run(SOURCE, name=5), TypeError, "name: expected str, got int"),
    (lambda: gpu16.run(SOURCE, memory=b"", memory_format=1), TypeError,
     "memory_format: expected str or None, got int"),
    (lambda: gpu16.run(SOURCE, tasks=None), TypeError, "tasks: expected str, got NoneType"),
    # A format is checked even with no memory to read: a misspelling is not ignored.
    (lambda: gpu16.run(SOURCE, memory_format="text"), ValueError,
     "unknown memory_format `text` (one of hex, raw)"),
    (lambda: gpu16.Machine(SOURCE, memory_format="bin"), ValueError,
     "unknown memory_format `bin` (one of hex, raw)"),
    (lambda: gpu16.run([1, 2]), TypeError,
     "program: expected bytes or bytearray (a program image) or str (assembly source), "
     "got list"),
    (lambda: gpu16.run(SOURCE, memory=[1, 2]), TypeError,
     "memory: expected bytes or bytearray, str ($readmemh text), os.PathLike (a file) or "
     "None, got list"),
    # Machine: run's arguments, checked the same way
    (lambda: gpu16.Machine(SOURCE, backend=3), TypeError, "backend: expected str, got int"),
    (lambda: gpu16.Machine(SOURCE, bank_conflicts="no"), TypeError,
     "bank_conflicts: expected bool, got str"),
    (lambda: gpu16.Machine(SOURCE, max_cycles=-5), ValueError,
     "max_cycles: -5 is not in 0..=288230376151711744"),
    (lambda: gpu16.Machine(SOURCE, name=b"x"), TypeError, "name: expected str, got bytes"),
    (lambda: gpu16.Machine({}), TypeError,
     "program: expected bytes or bytearray (a program image) or str (assembly source), "
     "got dict"),
    # Machine's methods
    (lambda: machine().step(-1), ValueError, "cycles: must be >= 0, got -1"),
    (lambda: machine().step("1"), TypeError, "cycles: expected int, got str"),
    (lambda: machine().step(1.5), TypeError, "cycles: expected int, got float"),
    (lambda: machine().step(True), TypeError, "cycles: expected int, got bool"),
    (lambda: machine().run(-5), ValueError, "until_cycle: must be >= 0, got -5"),
    (lambda: machine().run("5"), TypeError, "until_cycle: expected int or None, got str"),
    (lambda: machine().write_memory(-1, b"x"), ValueError, "addr: must be in 0..4096, got -1"),
    (lambda: machine().write_memory(4096, b"x"), ValueError,
     "addr: must be in 0..4096, got 4096"),
    (lambda: machine().write_memory(2**64, b"x"), ValueError,
     "addr: must be in 0..4096, got 18446744073709551616"),
    (lambda: machine().write_memory("0", b"x"), TypeError, "addr: expected int, got str"),
    (lambda: machine().write_memory(0, [1]), TypeError,
     "data: expected bytes or bytearray, got list"),
    (lambda: machine().write_memory(4095, b"xy"), ValueError,
     "data: 2 bytes at address 4095 do not fit in the 4096 bytes of shared memory"),
    # load_memory
    (lambda: gpu16.load_memory(5), TypeError, "path: expected str or os.PathLike, got int"),
    (lambda: gpu16.load_memory("m.hex", memory_format=5), TypeError,
     "memory_format: expected str or None, got int"),
    # generate, generate_image
    (lambda: gpu16.generate("a"), TypeError, "seed: expected int, got str"),
    (lambda: gpu16.generate(-1), ValueError, "seed: -1 is not in 0..=18446744073709551615"),
    (lambda: gpu16.generate(2**64), ValueError,
     "seed: 18446744073709551616 is not in 0..=18446744073709551615"),
    (lambda: gpu16.generate(1, profile=3), TypeError, "profile: expected str, got int"),
    (lambda: gpu16.generate(1, groups="3"), TypeError, "groups: expected int, got str"),
    (lambda: gpu16.generate(1, groups=-1), ValueError, "groups: -1 is not in 1..=65536"),
    (lambda: gpu16.generate(1, dialect=None), TypeError, "dialect: expected str, got NoneType"),
    (lambda: gpu16.generate_image(1.0), TypeError, "seed: expected int, got float"),
    (lambda: gpu16.generate_image(1, groups=2**70), ValueError,
     "groups: 1180591620717411303424 is not in 1..=65536"),
]


@pytest.mark.parametrize("call, kind, message", CASES, ids=[c[2] for c in CASES])
def test_an_argument_error_starts_with_the_arguments_name(call, kind, message):
    with pytest.raises(kind) as e:
        call()
    assert type(e.value) is kind
    assert str(e.value) == message


def test_values_of_the_right_type_are_taken():
    # bytearray for bytes, a PathLike for a path, None for optional ints and strs, and
    # ints past 2**64 where any count is allowed (run to the end).
    image = bytearray(gpu16.assemble(SOURCE))
    assert gpu16.disassemble(image).startswith("; gpu16 program, 2 frames")
    r = gpu16.run(image, None, "interp", "spec", None, "in-order", False, None)
    assert r["cycles"] == 6  # CF in 0, broadcast 1-4, `ready` in 5
    m = machine()
    assert m.step(0) == "paused" and m.cycle == 0
    assert m.step(2**70) == "ended" and m.cycle == 6
    m = machine()
    assert m.run(None) == "ended"
    m = machine()
    assert m.run(2**70) == "ended"
    m = machine()
    m.write_memory(4095, bytearray(b"\x07"))
    assert m.memory[4095] == 7
    assert gpu16.generate(2**64 - 1) == gpu16.generate(2**64 - 1)


def test_load_memory_takes_a_str_or_a_pathlike(tmp_path):
    path = tmp_path / "m.hex"
    path.write_text("@10 29\n")
    assert gpu16.load_memory(str(path))[0x10] == 0x29
    assert gpu16.load_memory(pathlib.Path(path))[0x10] == 0x29
