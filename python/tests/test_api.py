"""Tests of the gpu16 Python API against hand-worked values: the cycle counts of the
README's worked examples, known registers and memory, the CLI's messages, and the keys and
values of `gpu16 run --json` for the same program."""

import json
import subprocess

import pytest

import gpu16
from conftest import EXAMPLES

# One core adds 2 and 3 and stores the sum at 0x010 (the worked example of src/lib.rs and
# the README). Control frame in cycle 0, broadcast in 1-4, six instructions in 5-10.
ADD = """\
    .cf mask=0x0001
    .if
        set_const 2, r8
        set_const 3, r9
        add r8, r9, r3
        set_const 0x10, r10
        st [r10, r1], r3
        ready
"""

CONTRACT_KEYS = {"cycles", "registers", "memory", "tasks", "instructions", "stalls",
                 "backend", "stats"}


def mem(report):
    """The report's memory as bytes (it is 8192 lowercase hex characters)."""
    return bytes.fromhex(report["memory"])


# --- assemble / disassemble -------------------------------------------------------------

def test_assemble_gives_the_frames_of_the_image():
    image = gpu16.assemble(ADD)
    assert len(image) == 2 * 32
    # Control frame: Active_Mask 0x0001 (bytes 2-3, little-endian), IF_Num 1.
    assert image[2:4] == b"\x01\x00"
    # The instruction frame ends in `ready` fill (0xf000, little-endian).
    assert image[-2:] == b"\x00\xf0"


def test_an_assembly_error_carries_the_diagnostic_text():
    with pytest.raises(gpu16.AssemblyError) as e:
        gpu16.assemble(".cf mask=1\n.if\n    frob r1\n", name="bad.s")
    # As `gpu16 asm bad.s` prints it: the line (indented by 4 in the file) under a 4-space
    # margin, and a caret under each character of the word.
    assert str(e.value) == ("bad.s:3:5: error: unknown instruction `frob`\n"
                            "        frob r1\n"
                            "        ^^^^")
    assert isinstance(e.value, ValueError)


def test_disassemble_prints_the_source_and_round_trips():
    image = gpu16.assemble(ADD)
    text = gpu16.disassemble(image)
    assert text.splitlines() == [
        "; gpu16 program, 2 frames",
        "",
        ".cf mask=0x0001 fence=no" + " " * 25 + "; frame 0, 1 instruction frame",
        ".if" + " " * 46 + "; frame 1",
        "          set_const 0x02, r8",
        "          set_const 0x03, r9",
        "          add r8, r9, r3",
        "          set_const 0x10, r10",
        "          st [r10, r1], r3",
    ]
    assert gpu16.assemble(text) == image


def test_disassemble_refuses_an_image_that_is_not_whole_frames():
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.disassemble(bytes(33))
    assert str(e.value) == ("image: image is 33 bytes, not a multiple of the 32-byte frame "
                            "size (1 whole frames and 1 bytes left over)")


# --- run ----------------------------------------------------------------------------------

def test_the_worked_example_takes_11_cycles():
    r = gpu16.run(ADD)
    assert r["cycles"] == 11
    assert r["instructions"] == 6
    assert r["stalls"] == 0
    assert r["registers"][0][3] == 5
    assert mem(r)[0x010] == 5
    assert r["tasks"] == [{"frame": 1, "mask": 1, "fence": "no", "issue": 1, "start": 5,
                           "end": 10}]
    assert r["backend"] == "auto"
    assert "error" not in r
    assert CONTRACT_KEYS <= r.keys()


@pytest.mark.parametrize("backend", ["interp", "jit", "auto"])
def test_every_backend_gives_the_same_answer(backend):
    source = ADD
    image = gpu16.assemble(source)
    for program in (source, image, bytearray(image)):
        r = gpu16.run(program, backend=backend)
        assert (r["cycles"], r["registers"][0][3], r["backend"]) == (11, 5, backend)


def test_the_counter_example_counts_to_160():
    # README: examples/counter.s takes 342 cycles and 880 instructions on auto.
    r = gpu16.run((EXAMPLES / "counter.s").read_text())
    assert (r["cycles"], r["instructions"]) == (342, 880)
    assert mem(r)[0] == 160


# r1 = 0 (bank 0), r10 = 0x10: the core loads the byte at 0x010, adds 1, stores it back.
INCREMENT_0X010 = """\
    .cf mask=0x0001
    .if
        set_const 0x10, r10
        ld [r10, r1], r3
        set_const 1, r9
        add r3, r9, r3
        st [r10, r1], r3
"""


def test_memory_is_the_initial_shared_memory():
    memory = bytearray(0x20)
    memory[0x010] = 41
    r = gpu16.run(INCREMENT_0X010, memory=bytes(memory))
    assert mem(r)[0x010] == 42
    assert mem(r)[0x011] == 0 and len(mem(r)) == 4096


def test_memory_as_text_a_path_or_bytes_follows_the_clis_rule(tmp_path):
    # 0x29 = 41 at address 0x010, given every way memory can be given.
    assert mem(gpu16.run(INCREMENT_0X010, memory="@10 29\n"))[0x010] == 42
    for name in ["init.mem", "init.hex", "init.vmem", "init.txt", "init.data", "init"]:
        path = tmp_path / name
        path.write_text("// from a testbench\n@10 29\n")
        assert mem(gpu16.run(INCREMENT_0X010, memory=path))[0x010] == 42, name
        assert gpu16.load_memory(path)[0x010] == 41, name
    raw = tmp_path / "init.bin"
    raw.write_bytes(bytes(0x10) + b"\x29")
    assert mem(gpu16.run(INCREMENT_0X010, memory=raw))[0x010] == 42
    # A raw extension reads text bytes as they are: '4' is 0x34 at address 0x010.
    (tmp_path / "ascii.raw").write_bytes(b"0123456789abcdef4")
    assert gpu16.load_memory(tmp_path / "ascii.raw")[0x010] == ord("4")
    # bytes have no name, so their content decides, as for `--mem -`: this text parses as
    # $readmemh (sixteen 00 bytes, then 0x29 at 0x010); memory_format="raw" takes its
    # bytes as they are, and byte 16 of the text is the ASCII '0' (16 = 5 * 3 + 1).
    text = b"00 " * 16 + b"29"
    assert mem(gpu16.run(INCREMENT_0X010, memory=text))[0x010] == 42
    assert mem(gpu16.run(INCREMENT_0X010, memory=bytearray(text)))[0x010] == 42
    assert mem(gpu16.run(INCREMENT_0X010, memory=text, memory_format="hex"))[0x010] == 42
    assert mem(gpu16.run(INCREMENT_0X010, memory=text, memory_format="raw"))[0x010] == ord("0") + 1
    assert len(gpu16.load_memory(raw)) == 4096


def test_memory_bytes_holding_readmemh_text_are_read_as_text():
    # A testbench that reads a .mem file in binary mode hands over its text: 0x29 = 41 at
    # 0x010, which the program loads, adds 1 to and stores back.
    text = b"// initial memory\n@10 29\n"
    assert mem(gpu16.run(INCREMENT_0X010, memory=text))[0x010] == 42
    assert mem(gpu16.run(INCREMENT_0X010, memory=bytearray(text)))[0x010] == 42
    m = gpu16.Machine(INCREMENT_0X010, memory=text)
    assert m.memory[0x010] == 0x29 and m.memory[0] == 0
    # Bytes that are not text (a NUL, here) stay raw: 0x29 is byte 16.
    assert mem(gpu16.run(INCREMENT_0X010, memory=bytes(16) + b"\x29"))[0x010] == 42
    # Text that is not $readmemh is refused, naming the argument that settles it.
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.run(INCREMENT_0X010, memory=b"hello world\n")
    assert str(e.value).startswith("memory: cannot tell how to read this memory image")
    assert "give memory_format= raw" in str(e.value)
    with pytest.raises(gpu16.LoadError):
        gpu16.Machine(INCREMENT_0X010, memory=b"hello world\n")
    # Taken raw, the 12 bytes of the text fill 0x000..0x00b: 0x010 stays 0, and becomes 1.
    r = gpu16.run(INCREMENT_0X010, memory=b"hello world\n", memory_format="raw")
    assert mem(r)[:12] == b"hello world\n" and mem(r)[0x010] == 1


def test_memory_that_cannot_be_told_apart_names_the_argument(tmp_path):
    path = tmp_path / "strings.dat"
    path.write_text("hello world\n")
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.load_memory(path)
    assert "cannot tell how to read this memory image" in str(e.value)
    assert "give memory_format= raw" in str(e.value)
    assert gpu16.load_memory(path, memory_format="raw")[:5] == b"hello"
    with pytest.raises(ValueError, match="unknown memory_format `text` \\(one of hex, raw\\)"):
        gpu16.load_memory(path, memory_format="text")
    with pytest.raises(TypeError, match="^memory: expected bytes .* got list$"):
        gpu16.run(INCREMENT_0X010, memory=[1, 2])
    with pytest.raises(TypeError, match="^program: expected bytes .* got list$"):
        gpu16.run([1, 2])


def test_timing_issue_and_bank_conflicts_are_echoed_and_used():
    # A control frame of 3 cycles (0-2) moves the broadcast to 3-6 and the six
    # instructions to 7-12: 13 cycles.
    r = gpu16.run(ADD, timing="cf=3", issue="lookahead", bank_conflicts=True)
    assert r["cycles"] == 13
    assert r["config"]["issue"] == "lookahead"
    assert r["config"]["bank_conflicts"] is True
    assert r["config"]["timing"]["cf"] == 3


def test_a_failed_run_is_a_dict_with_error_not_an_exception():
    # The watchdog at 8 cycles: the add ran in cycle 7, the store was due in cycle 9.
    r = gpu16.run(ADD, max_cycles=8, name="add.s")
    assert r["cycles"] == 8
    assert r["registers"][0][3] == 5
    assert mem(r)[0x010] == 0
    e = r["error"]
    assert e["rule"] == "watchdog"
    assert e["limit"] == 8
    assert e["message"].startswith("watchdog: the run reached its limit of 8 cycles")
    # Core 0 is at IP 3, the `set_const 0x10, r10` on line 6, column 9.
    assert e["cores"] == [{"core": 0, "frame": 1, "ip": 3, "state": "running",
                           "location": {"file": "add.s", "line": 6, "col": 9}}]
    assert r["tasks"][0]["end"] is None


def test_a_fault_names_the_rule_and_the_instruction():
    source = ".cf mask=0x0001\n.if\n    st_sync [r1, r1], r2\n"
    r = gpu16.run(source, name="fault.s")
    e = r["error"]
    # The rule's name is the one `gpu16 gen --break` takes; the first instruction runs in
    # cycle 5, and r1 = 0 on core 0 makes the address 0x000.
    assert e["rule"] == "st_sync-without-sequence"
    assert (e["frame"], e["core"], e["ip"], e["cycle"], e["addr"]) == (1, 0, 0, 5, 0)
    assert e["location"] == {"file": "fault.s", "line": 3, "col": 5}
    assert e["message"] == ("frame 1, core 0, IP 0, cycle 5: st_sync with no open atomic "
                            "sequence (no ld_sync before it) [access to 0x000]")


def test_inputs_past_the_clis_limits_raise_with_its_message():
    image = gpu16.assemble(ADD)
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.run(image, memory=bytes(4097))
    assert str(e.value) == ("memory: too large: a raw memory image may have at most 4096 "
                            "bytes (4 KiB); this input has 4097")
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.run(image[:40])
    assert str(e.value).startswith("program: image is 40 bytes, not a multiple")


def test_unknown_option_values_raise_value_error_naming_the_accepted_ones():
    cases = [
        (dict(backend="gpu"), "unknown backend `gpu` (one of interp, jit, auto)"),
        (dict(dialect="verilog"), "unknown dialect `verilog` (one of spec, mcst)"),
        (dict(issue="random"), "unknown issue policy `random` (one of in-order, lookahead)"),
        (dict(max_cycles=2**58 + 1),
         "max_cycles: 288230376151711745 is not in 0..=288230376151711744"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as e:
            gpu16.run(ADD, **kwargs)
        assert str(e.value) == message
    with pytest.raises(ValueError, match="^timing: "):
        gpu16.run(ADD, timing="nosuchkey=1")
    with pytest.raises(TypeError):
        gpu16.run(42)


def test_the_dict_is_the_clis_run_json(gpu16_bin, tmp_path):
    for source in (ADD, (EXAMPLES / "counter.s").read_text()):
        path = tmp_path / "prog.s"
        path.write_text(source)
        for argv, kwargs in [([], {}), (["--max-cycles", "8"], {"max_cycles": 8})]:
            out = subprocess.run([gpu16_bin, "run", str(path), "--json", "--quiet", *argv],
                                 capture_output=True, text=True)
            cli = json.loads(out.stdout)
            py = gpu16.run(source, name=str(path), **kwargs)
            assert py.keys() == cli.keys()
            assert py == cli


def test_the_dict_is_the_clis_run_json_for_an_image(gpu16_bin, tmp_path):
    image, memory = gpu16.generate_image(7, "atomics")
    (tmp_path / "g.bin").write_bytes(image)
    (tmp_path / "g.raw").write_bytes(memory)
    out = subprocess.run([gpu16_bin, "run", str(tmp_path / "g.bin"), "--mem",
                          str(tmp_path / "g.raw"), "--json", "--quiet", "--backend", "interp"],
                         capture_output=True, text=True)
    assert gpu16.run(image, memory, backend="interp") == json.loads(out.stdout)


def test_an_image_streams_and_is_still_checked_whole_first():
    # A raw spec image runs as a stream over the caller's bytes (issue 33, F15: it is held
    # once), but it is checked whole before the run, so a broken frame raises even where
    # the run would stop before reaching it (the watchdog at cycle 1, here).
    img = gpu16.assemble(".cf mask=1\n.if\nready\n")
    bad = bytearray(32)
    bad[0] = 0xC0  # fence 3, reserved
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.run(img + bytes(bad), max_cycles=1)
    assert str(e.value) == "program: frame 2: control frame has the reserved fence value 3"
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.run(img + bytes(5))
    assert str(e.value).startswith("program: image is 69 bytes, not a multiple of the 32-byte")
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.run(b"")
    assert str(e.value) == gpu16_load_error_of(b"")
    # Streamed (bytes, bytearray) and loaded whole (a Machine run to its end) agree, on
    # generated programs whose runs fault (their state then comes from a second pass over
    # the stream) or end.
    for seed in range(6):
        image, memory = gpu16.generate_image(seed, "atomics", groups=3)
        whole = gpu16.Machine(image, memory, backend="interp")
        whole.run()
        expected = whole.report()
        assert gpu16.run(image, memory, backend="interp") == expected, seed
        assert gpu16.run(bytearray(image), memory, backend="interp") == expected, seed


def gpu16_load_error_of(image):
    """The message loading `image` whole gives (a Machine loads its program whole)."""
    with pytest.raises(gpu16.LoadError) as e:
        gpu16.Machine(image)
    return str(e.value)


# --- generate -----------------------------------------------------------------------------

def test_generate_is_the_source_of_the_generated_image():
    image, memory = gpu16.generate_image(42, "atomics")
    assert len(image) % 32 == 0 and 0 < len(memory) <= 4096
    source = gpu16.generate(42, "atomics")
    assert source.startswith(f"; gpu16 program, {len(image) // 32} frames\n")
    assert gpu16.assemble(source) == image
    assert gpu16.generate(42, "atomics") == source  # the same seed, the same program
    assert gpu16.generate(43, "atomics") != source


def test_generate_checks_the_profile_and_groups():
    with pytest.raises(ValueError) as e:
        gpu16.generate(1, "fast")
    assert str(e.value) == "unknown profile `fast` (one of alu, memory, atomics, scheduler, mixed, private)"
    with pytest.raises(ValueError) as e:
        gpu16.generate(1, "alu", groups=0)
    assert str(e.value) == "groups: 0 is not in 1..=65536"


def test_generate_writes_what_gpu16_gen_writes(gpu16_bin, tmp_path):
    out, mem_out = tmp_path / "g.bin", tmp_path / "g.raw"
    subprocess.run([gpu16_bin, "gen", "--seed", "42", "--profile", "atomics", "-o", str(out),
                    "--mem-out", str(mem_out)], check=True)
    assert gpu16.generate_image(42, "atomics") == (out.read_bytes(), mem_out.read_bytes())
    # Named as a text, the memory image is $readmemh text, and reads back the same.
    text_out = tmp_path / "g.mem"
    subprocess.run([gpu16_bin, "gen", "--seed", "42", "--profile", "atomics", "-o", str(out),
                    "--mem-out", str(text_out)], check=True)
    assert text_out.read_text().startswith("// gpu16 shared memory ($readmemh)")
    memory = gpu16.generate_image(42, "atomics")[1]
    assert gpu16.load_memory(text_out) == memory + bytes(4096 - len(memory))
    text = subprocess.run([gpu16_bin, "disasm", str(out)], check=True, capture_output=True,
                          text=True).stdout
    assert gpu16.generate(42, "atomics") == text
