"""kernlab.run and kernlab.tune: the binary with keyword arguments, its results as a DataFrame.

Keyword arguments are the command line's options with `_` for `-`: `size="2^24"` is
`--size 2^24`, `placement_workers=1` is `--placement-workers 1`; a list is joined with commas
(`block=[256, 512]` is `--block 256,512`); True is the bare switch, False and None leave it out.
"""
import os
import shutil
import subprocess
import tempfile

from kernlab.read import read


class KernlabError(RuntimeError):
    """kernlab exited with an error: `returncode`, and its output in `output`."""

    def __init__(self, command, returncode, output):
        self.command, self.returncode, self.output = command, returncode, output
        tail = "\n".join(output.strip().splitlines()[-12:])
        super().__init__(f"{' '.join(command)}: exit {returncode}\n{tail}")


def find_binary(binary=None):
    """The kernlab executable: `binary`, else $KERNLAB, else `kernlab` on PATH."""
    path = binary or os.environ.get("KERNLAB") or shutil.which("kernlab")
    if not path:
        raise FileNotFoundError("kernlab not found: pass binary=..., set KERNLAB, or put it on PATH")
    return str(path)


def options(kwargs):
    """The command line's options for `kwargs`, in their order."""
    out = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out += [flag, ",".join(str(v) for v in value)]
        else:
            out += [flag, str(value)]
    return out


def _run(args, binary, cwd, timeout):
    with tempfile.TemporaryDirectory(prefix="kernlab-py-") as tmp:
        json_path = os.path.join(tmp, "results.json")
        command = [find_binary(binary)] + args + ["--json", json_path]
        p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", cwd=cwd, timeout=timeout)
        # 1 is "a variant failed": its rows are in the file, with their outcome.
        if p.returncode not in (0, 1) or not os.path.exists(json_path):
            raise KernlabError(command, p.returncode, p.stdout)
        df = read(json_path)
        df.attrs["output"] = p.stdout
        df.attrs["returncode"] = p.returncode
        return df


def run(binary=None, cwd=None, timeout=None, **kwargs):
    """Runs `kernlab` with `kwargs` as its options and returns read() of its --json file. A run
    whose variants fail still returns them (outcome `failed`, `wrong_result`; kernlab's exit 1);
    any other error raises KernlabError with kernlab's output."""
    return _run(options(kwargs), binary, cwd, timeout)


def tune(variant, binary=None, cwd=None, timeout=None, **kwargs):
    """Runs `kernlab tune --variant VARIANT` (a tunable kernel file: its name or path) with
    `kwargs` as its other options and returns read() of its --json file: a row per evaluated
    point, its tunables as columns; the tuning table in df.attrs["tuning"]."""
    args = ["tune", "--variant", str(variant)] + options(kwargs)
    return _run(args, binary, cwd, timeout)
