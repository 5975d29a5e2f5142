"""attend.ray's command line takes `attend translate`'s flags, and its Translate writes
each line as `attend translate` does. Checked in this process, without a Ray cluster
(test_ray.py runs the same on one): the flags are parsed by the real parser of
`python -m attend.ray translate`, and every output is compared with the CLI's."""

import re
import subprocess
import sys

import pytest

import attend
import attend.ray
from conftest import SOURCE, assert_same_output, cli_translate, name_corpus

ENCODER = SOURCE / "tests/data/encoders/bert"

# `attend translate` flags that `python -m attend.ray translate` has no use for, and why.
NOT_ON_RAY = {
    "--preset": "a built-in random model has nothing to translate across machines",
    "--output": "outputs are OUTPUT_DIR/<input name> (-o is --output-dir)",
    "--attention": "one JSON file per run does not shard; Translate returns no attention",
    "--attention-all": "a few chosen lines' every head: a look at one model, not a corpus job",
    "--attention-lines": "(goes with --attention-all)",
    "--strict": "lines are repaired as by default; a cluster job does not stop at one bad line",
    "--quiet": "progress goes to stderr once a second",
    "--inter-threads": "actors are the unit of parallelism (--actors)",
    "--intra-threads": "--threads is each actor's compute threads",
}


def flags_of(help_text: str) -> set:
    return {f for line in help_text.split("\n") for f in re.findall(r"^\s*(?:-\w[^,]*,\s?)?(--[a-z][a-z-]*)", line)}


def test_the_ray_command_takes_every_decoding_flag_of_attend_translate(cli):
    ours = flags_of(run_command("--help").stdout)
    theirs = flags_of(subprocess.run([str(cli), "translate", "--help"], capture_output=True, text=True,
                                     check=True).stdout)
    assert theirs - ours == set(NOT_ON_RAY), theirs - ours
    # Made from the one description list: each option with a flag, with its field.
    for spec in attend._attend.translation_option_specs():
        if spec.flag:
            assert spec.flag in ours, spec.name


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """300 names, a few of them empty lines."""
    path = tmp_path_factory.mktemp("ray-translate") / "names.txt"
    path.write_text("\n".join(name_corpus(300, seed=21)) + "\n", encoding="utf-8")
    return path


def on_ray_translate(model, path, flags, prefix_file=None, shard=64):
    """Translates `path` as `python -m attend.ray translate … FLAGS` would, in shards of
    `shard` lines (the seeds and n-best indices count lines across shards)."""
    args = attend.ray.parser().parse_args(["translate", "--address", "local", "-m", str(model), "-i", str(path),
                                           "-o", "unused", *flags])
    translate = attend.ray.Translate(str(model), **attend.ray.translate_arguments(args))
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    prefixes = prefix_file.read_text(encoding="utf-8").split("\n")[:-1] if prefix_file else None
    out = []
    for first in range(0, len(lines), shard):
        outputs = translate.translate_lines(lines[first:first + shard], first,
                                            prefixes[first:first + shard] if prefixes else None)
        assert len(outputs) == len(lines[first:first + shard])
        out += outputs
    return "\n".join(out).split("\n")


@pytest.mark.parametrize("flags", [
    ["--beam", "3", "--n-best", "3"],
    ["--beam", "4", "--length-penalty", "0.5", "--scores"],
    ["--beam", "2", "--n-best", "2", "--return-alternatives"],
    ["--beam", "1", "--max-length", "4", "--min-length", "2", "--scores"],
    ["--beam", "3", "--no-repeat-ngram-size", "1", "--repetition-penalty", "1.5", "--coverage-penalty", "0.2"],
    ["--beam", "2", "--end-token", "o", "--return-end-token", "--suppress-sequences", "a t", "--max-length", "24"],
    ["--beam", "2", "--target-prefix", "a b"],
    ["--beam", "2", "--max-input-length", "4", "--disable-unk", "--output-format", "ids"],
], ids=lambda f: " ".join(f))
def test_translate_writes_what_attend_translate_writes(translit, corpus, cli, flags):
    common = ["--input-format", "tokens"]
    assert_same_output(on_ray_translate(translit, corpus, common + flags), cli_translate(translit, corpus, *common, *flags))


@pytest.fixture(scope="module")
def sparse_corpus(tmp_path_factory):
    """200 names with empty and blank lines among them (the first line, runs of two, one
    line in seven): the non-empty lines are not the lines."""
    lines = ["" if i == 0 or i % 7 == 3 or i % 31 in (5, 6) else line for i, line in enumerate(name_corpus(200, seed=4))]
    lines[50] = " \t "
    path = tmp_path_factory.mktemp("sparse") / "sparse.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


SAMPLED = ["--input-format", "tokens", "--sample-topk", "10", "--temperature", "1.5", "--seed", "7"]


@pytest.mark.parametrize("shard,batch", [(64, 32), (7, 3), (1000, 1)], ids=lambda v: str(v))
def test_seeded_sampling_is_attend_translates_byte_for_byte_with_empty_lines(translit, sparse_corpus, cli, shard,
                                                                            batch):
    # Each line draws by its line number in the file, empty lines counted, as the CLI's
    # lines do: whatever the shards (blocks) and batches, the same bytes.
    flags = [*SAMPLED, "--max-batch-size", str(batch)]
    got = on_ray_translate(translit, sparse_corpus, flags, shard=shard)
    assert got == cli_translate(translit, sparse_corpus, *flags)
    # N draws a line, numbered by line: texts exactly, scores to 1e-5 (assert_same_output).
    nbest = ["--input-format", "tokens", "--sampling", "--temperature", "2", "--seed", "3", "--n-best", "2", "--scores",
             "--max-batch-size", str(batch)]
    assert_same_output(on_ray_translate(translit, sparse_corpus, nbest, shard=shard),
                       cli_translate(translit, sparse_corpus, *nbest))
    assert got != on_ray_translate(translit, sparse_corpus, [*SAMPLED[:-1], "8"], shard=shard)  # the seed counts


def test_map_batches_with_an_id_column_samples_as_attend_translate(translit, sparse_corpus, cli):
    # Ray Data's batches carry no line numbers: id_column gives them. Batches of odd
    # sizes, in any order, rows shuffled inside one: each row is the CLI's line.
    pandas = pytest.importorskip("pandas")
    import random

    lines = sparse_corpus.read_text(encoding="utf-8").split("\n")[:-1]
    translate = attend.ray.Translate(str(translit), input_format="tokens", id_column="line", seed=7,
                                     options={"sampling_topk": 10, "temperature": 1.5})
    cuts = [0, 1, 38, 39, 90, 151, len(lines)]
    batches = [list(range(a, b)) for a, b in zip(cuts, cuts[1:])]
    random.Random(1).shuffle(batches[3])
    got = {}
    for rows in reversed(batches):
        out = translate(pandas.DataFrame({"text": [lines[r] for r in rows], "line": rows}))
        got.update(zip(out["line"], out["translation"]))
    assert [got[r] for r in range(len(lines))] == cli_translate(translit, sparse_corpus, *SAMPLED)


# Cells that are not text, as Ray Data hands them over: every kind raises TypeError
# naming the column, the row and the type, in every batch format, for every UDF.
BAD_CELLS = [(None, "NoneType"), (7, "int"), (2.5, "float"), (float("nan"), "float"), (b"x", "bytes"),
             (["a"], "list")]


def batches_with(cell, column="text"):
    """(format, batch) with `cell` at row 1 between two good lines: a dict of NumPy
    arrays, a pandas DataFrame, and an Arrow table where a string column can hold it (a
    missing value: null)."""
    import numpy as np

    values = ["آ ت", cell, "ز م"]
    cells = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        cells[i] = v
    out = [("dict", {column: cells})]
    try:
        import pandas
        import pyarrow
    except ImportError:
        return out
    out.append(("pandas", pandas.DataFrame({column: values})))
    if cell is None or cell != cell:
        out.append(("arrow", pyarrow.table({column: pyarrow.array(["آ ت", None, "ز م"], type=pyarrow.string())})))
    return out


@pytest.mark.parametrize("cell,type_name", BAD_CELLS, ids=lambda v: repr(v))
def test_cells_that_are_not_text_raise_type_error_naming_the_row(translit, cell, type_name):
    translate = attend.ray.Translate(str(translit), input_format="tokens")
    embed = attend.ray.Embed(str(ENCODER))
    for udf in (translate, embed):
        for fmt, batch in batches_with(cell):
            # A missing value is whichever the format holds: Arrow a null, pandas None or NaN (its version's choice).
            expected = "(NoneType|float)" if fmt != "dict" and (cell is None or cell != cell) else type_name
            with pytest.raises(TypeError, match=rf"column 'text', row 1: {expected} .* is not text"):
                udf(batch)
    # Called directly: the row is the line's number (first_line + its index).
    with pytest.raises(TypeError, match=rf"row 41: {type_name} "):
        translate.translate_lines(["آ ت", cell], first_line=40)
    with pytest.raises(TypeError, match=rf"row 41: {type_name} "):
        embed.embed_lines(["hello", cell], first_line=40)
    # With an id column the row is its id.
    pandas = pytest.importorskip("pandas")
    in_pandas = "(NoneType|float)" if cell is None or cell != cell else type_name
    with pytest.raises(TypeError, match=rf"column 'src', row 12: {in_pandas} "):
        attend.ray.Translate(str(translit), input_format="tokens", column="src", id_column="line")(
            pandas.DataFrame({"src": ["آ ت", "آ", cell], "line": [10, 11, 12]}))


def test_typed_columns_and_missing_values_of_every_kind_are_refused():
    # Whole columns of the wrong type, as Ray Data makes them from Parquet or pandas.
    import numpy as np

    embed = attend.ray.Embed(str(ENCODER))
    for column, type_name in [(np.array([1.0, np.nan]), "float64"), (np.array([3, 4]), "int64"),
                              (np.array([b"a", b"b"]), "bytes_")]:
        with pytest.raises(TypeError, match=rf"column 'text', row 0: {type_name} "):
            embed({"text": column})
    pyarrow = pytest.importorskip("pyarrow")
    for column, type_name in [(pyarrow.array([1, 2]), "int"), (pyarrow.array([b"a", b"b"]), "bytes")]:
        with pytest.raises(TypeError, match=rf"column 'text', row 0: {type_name} "):
            embed(pyarrow.table({"text": column}))
    pandas = pytest.importorskip("pandas")
    strings = pandas.Series(["a", None, "b"], dtype="string")  # pandas' own missing value: pd.NA
    with pytest.raises(TypeError, match="column 'text', row 1: NAType "):
        embed(pandas.DataFrame({"text": strings}))


def test_a_byte_order_mark_opening_a_cell_or_a_file_is_dropped(translit, tmp_path):
    import numpy as np

    translate = attend.ray.Translate(str(translit), input_format="tokens")
    plain = translate({"text": np.array(["آ ت ز م و ن", "ز م"], dtype=object)})["translation"]
    marked = translate({"text": np.array(["\ufeffآ ت ز م و ن", "ز م"], dtype=object)})["translation"]
    assert list(marked) == list(plain) == ["a t z m o n", list(plain)[1]]
    embed = attend.ray.Embed(str(ENCODER), input_format="ids")  # a kept mark: not an id
    np.testing.assert_array_equal(embed({"text": np.array(["\ufeff2 7 3"], dtype=object)})["embedding"],
                                  embed({"text": np.array(["2 7 3"], dtype=object)})["embedding"])
    # The command line's files, and its target prefix files, as the CLI reads them.
    source, prefixes = tmp_path / "in.txt", tmp_path / "prefixes.txt"
    source.write_bytes("\ufeffآ ت ز م و ن\n\ufeffآ\n".encode())
    prefixes.write_bytes("\ufeffa t s\nb\n".encode())
    shards = attend.ray._Shards(0, source, tmp_path / "out", 1, "settings", prefixes)
    assert shards.prepare()
    assert list(attend.ray._read_shards(shards)) == [(0, ["آ ت ز م و ن"], ["a t s"]), (1, ["\ufeffآ"], ["b"])]


def test_writes_that_fail_name_their_file(tmp_path):
    # A full disk behind every file the command line writes: a shard, the joined
    # output, the .npy shard and output (each opened through a link to /dev/full).
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n", encoding="utf-8")
    for kind in (attend.ray._Shards, attend.ray._EmbeddingShards):
        out = tmp_path / kind.__name__
        shards = kind(0, source, out, 2, "settings")
        assert shards.prepare()
        rows = ["x", "y"] if kind is attend.ray._Shards else [[1.0], [2.0]]
        tmp = shards.shard_file(0).with_suffix(".tmp")
        tmp.symlink_to("/dev/full")
        with pytest.raises(OSError, match=rf"^cannot write {tmp}: No space left on device$"):
            shards.write_shard(0, rows)
        tmp.unlink()
        shards.write_shard(0, rows)
        joined = shards.output.with_name(shards.output.name + ".attend-ray.tmp")
        joined.symlink_to("/dev/full")
        if kind is attend.ray._EmbeddingShards:  # a memory map of /dev/full cannot be made: named too
            with pytest.raises(OSError, match=rf"^cannot write {joined}: "):
                shards.finish()
        else:
            with pytest.raises(OSError, match=rf"^cannot write {joined}: No space left on device$"):
                shards.finish()
        assert not shards.output.exists()


def test_output_and_input_paths_are_named_without_errno(translit, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    source = tmp_path / "in.txt"
    source.write_text("آ ت\n", encoding="utf-8")
    for command in ("translate", "embed"):
        base = [command, "--address", "local", "-m", str(translit)]
        for args, message in [([*base, "-i", str(source), "-o", str(afile)],
                               f"the output directory {afile} exists and is not a directory"),
                              ([*base, "-i", str(source), "-o", str(afile / "sub")],
                               f"cannot make the output directory {afile / 'sub'}: Not a directory"),
                              ([*base, "-i", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "out")],
                               f"cannot read the input {tmp_path / 'missing.txt'}: No such file or directory"),
                              ([*base, "-i", str(tmp_path), "-o", str(tmp_path / "out")],
                               f"cannot read the input {tmp_path}: Is a directory")]:
            assert attend.ray.main(args) == 1, args
            err = capsys.readouterr().err
            assert message in err and "Errno" not in err, (args, err)
    assert afile.read_text() == "x\n"


def test_target_prefix_file(translit, corpus, tmp_path, cli):
    prefixes = tmp_path / "prefixes.txt"
    count = len(corpus.read_text(encoding="utf-8").split("\n")[:-1])
    prefixes.write_text("\n".join(["a", "", "b o"][i % 3] for i in range(count)) + "\n", encoding="utf-8")
    flags = ["--input-format", "tokens", "--beam", "2"]
    assert_same_output(on_ray_translate(translit, corpus, flags, prefixes),
                       cli_translate(translit, corpus, *flags, "--target-prefix-file", str(prefixes)))


def test_text_in_and_out_with_replace_unknowns(text_model, tmp_path, cli):
    lines = (text_model.parent / "corpus.txt").read_text(encoding="utf-8").split("\n")[:60]
    path = tmp_path / "text.txt"
    path.write_text("\n".join(lines[:30] + ["", "   ", "\u3000"] + lines[30:]) + "\n", encoding="utf-8")
    for flags in (["--beam", "2", "--max-length", "16"], ["--max-length", "12", "--replace-unknowns", "--scores"]):
        assert_same_output(on_ray_translate(text_model, path, flags), cli_translate(text_model, path, *flags))


def run_command(*args):
    return subprocess.run([sys.executable, "-m", "attend.ray", "translate", *args], capture_output=True, text=True,
                          timeout=120)


def test_bad_flags_are_usage_errors_naming_the_flag(translit, corpus, tmp_path):
    base = ["--address", "local", "-m", str(translit), "-i", str(corpus), "-o", str(tmp_path / "out")]
    for flags, message in [(["--beam", "0"], "--beam: must be an integer in [1, 256], got 0"),
                           (["--sample-topp", "x"], "--sample-topp: 'x' is not a number in (0, 1]"),
                           (["--sampling", "--beam", "4"], "--beam > 1 exclude each other"),
                           (["--replace-unknowns", "--output-format", "ids"], "--replace-unknowns"),
                           (["--target-prefix", "a", "--target-prefix-file", str(corpus)], "exclude each other")]:
        run = run_command(*base, *flags)
        assert run.returncode == 2, (flags, run.stderr)
        assert message in run.stderr, (flags, run.stderr)
    assert not (tmp_path / "out" / corpus.name).exists()


def test_decoding_options_by_name_for_map_batches(translit):
    o = attend.ray.decoding_options({"beam_size": 4, "sampling_topk": 3, "end_token": "o",
                                     "suppress_sequences": ["a t", ["b"]]})
    assert (o.beam_size, o.sampling_topk, o.sampling) == (4, 3, True)  # top-k implies sampling
    assert o.end_token == ["o"] and o.suppress_sequences == [["a", "t"], ["b"]]
    with pytest.raises(ValueError, match="no decoding option is called 'beam'"):
        attend.ray.decoding_options({"beam": 4})
    with pytest.raises(ValueError, match=r"num_hypotheses = 0: must be an integer in \[1, 256\]"):
        attend.ray.decoding_options({"num_hypotheses": 0})
    with pytest.raises(ValueError, match="max_length = 100000"):
        attend.ray.Translate(str(translit), input_format="tokens", options={"max_length": 100000})
