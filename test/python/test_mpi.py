# REQUIRES: mpirun
# RUN: %pytest %s
"""The same training script on in-process ranks and under mpirun -np 2
(one rank per process, the MPI backend) prints the same losses; every
process gets the loss, the whole output and the gradients."""
import os
import subprocess
import sys

from conftest import INPUTS

SCRIPT = os.path.join(INPUTS, "train_loop.py")


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode == 0, result.stdout
    return result.stdout


def test_mpirun_gives_the_losses_of_threads(tmp_path):
    threads = run([sys.executable, SCRIPT])
    lines = threads.splitlines()
    assert len([l for l in lines if l.startswith("step ")]) == 10
    # Each process prints (into its own file) what the threads run did.
    run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
         "--output-filename", str(tmp_path / "ranks"), "-x", "PYTHONPATH",
         sys.executable, SCRIPT, str(tmp_path / "work")])
    for rank in range(2):
        with open(tmp_path / "ranks" / "1" / ("rank.%d" % rank) / "stdout") as f:
            assert f.read().splitlines() == lines, rank
