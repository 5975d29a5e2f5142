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
from conftest import assert_same_output, cli_translate, name_corpus

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


def on_ray_translate(model, path, flags, prefix_file=None):
    """Translates `path` as `python -m attend.ray translate … FLAGS` would, in shards of
    64 lines (the seeds and n-best indices count lines across shards)."""
    args = attend.ray.parser().parse_args(["translate", "--address", "local", "-m", str(model), "-i", str(path),
                                           "-o", "unused", *flags])
    translate = attend.ray.Translate(str(model), **attend.ray.translate_arguments(args))
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    prefixes = prefix_file.read_text(encoding="utf-8").split("\n")[:-1] if prefix_file else None
    out = []
    for first in range(0, len(lines), 64):
        shard = translate.translate_lines(lines[first:first + 64], first,
                                          prefixes[first:first + 64] if prefixes else None)
        assert len(shard) == len(lines[first:first + 64])
        out += shard
    return "\n".join(out).split("\n")


@pytest.mark.parametrize("flags", [
    ["--beam", "3", "--n-best", "3"],
    ["--beam", "4", "--length-penalty", "0.5", "--scores"],
    ["--beam", "2", "--n-best", "2", "--return-alternatives"],
    ["--beam", "1", "--max-length", "4", "--min-length", "2", "--scores"],
    ["--beam", "3", "--no-repeat-ngram-size", "1", "--repetition-penalty", "1.5", "--coverage-penalty", "0.2"],
    ["--beam", "2", "--end-token", "o", "--return-end-token", "--suppress-sequences", "a t"],
    ["--beam", "2", "--target-prefix", "a b"],
    ["--beam", "2", "--max-input-length", "4", "--disable-unk", "--output-format", "ids"],
], ids=lambda f: " ".join(f))
def test_translate_writes_what_attend_translate_writes(translit, corpus, cli, flags):
    common = ["--input-format", "tokens"]
    assert_same_output(on_ray_translate(translit, corpus, common + flags), cli_translate(translit, corpus, *common, *flags))


def test_sampling_draws_as_attend_translate_draws_without_empty_lines(translit, tmp_path, cli):
    # Seeds: the line's index in its file. `attend translate` numbers the non-empty lines
    # of each chunk it reads, so the draws agree line for line where no line is empty.
    path = tmp_path / "full.txt"
    path.write_text("\n".join(line for line in name_corpus(200, seed=4) if line) + "\n", encoding="utf-8")
    for flags in (["--sampling", "--temperature", "2", "--seed", "9"],
                  ["--sample-topk", "5", "--temperature", "1.5", "--seed", "3", "--n-best", "2", "--scores"]):
        flags = ["--input-format", "tokens", *flags]
        got = on_ray_translate(translit, path, flags)
        assert_same_output(got, cli_translate(translit, path, *flags))
        assert got != on_ray_translate(translit, path, flags[:flags.index("--seed")] + ["--seed", "10"])


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
