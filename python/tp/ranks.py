"""Where this process's ranks run: in-process threads, or one rank per
process under mpirun (the same script runs unchanged)."""
import atexit
import os
import shutil
import tempfile

from . import _tprt
from ._tprt import Error

_workdirs = []


def default_backend():
    """"mpi" under mpirun (OpenMPI sets OMPI_COMM_WORLD_SIZE), else
    "threads"."""
    return "mpi" if "OMPI_COMM_WORLD_SIZE" in os.environ else "threads"


def check_backend(backend):
    backend = backend or default_backend()
    if backend not in ("threads", "mpi"):
        raise Error("backend '%s': threads (ranks are threads of this "
                    "process) or mpi (one process per rank, under mpirun)"
                    % backend)
    if backend == "mpi":
        _tprt.mpi_init()
    return backend


def is_leader(backend):
    """The process that exports and compiles (rank 0 under MPI)."""
    return backend != "mpi" or _tprt.mpi_rank() == 0


def on_leader(backend, work):
    """Runs work() on the leader; under MPI the others wait for it and get
    its result (a string) or raise its error."""
    if backend != "mpi":
        return work()
    result, error = "", ""
    if _tprt.mpi_rank() == 0:
        try:
            result = work()
        except Error as e:
            error = str(e)
    error = _tprt.mpi_broadcast(error)
    if error:
        raise Error(error)
    return _tprt.mpi_broadcast(result)


def make_workdir(backend, workdir):
    """A folder for the exported model and compiled programs: `workdir`, or
    a temporary one removed at exit (under MPI on several machines, give a
    workdir on a shared file system)."""
    if workdir:
        os.makedirs(workdir, exist_ok=True)
        return os.path.abspath(workdir)

    def make():
        path = tempfile.mkdtemp(prefix="tp-")
        _workdirs.append(path)
        return path
    return on_leader(backend, make)


@atexit.register
def _shutdown():
    if _workdirs:
        try:
            if "OMPI_COMM_WORLD_SIZE" in os.environ:
                _tprt.mpi_barrier()
        finally:
            for path in _workdirs:
                shutil.rmtree(path, ignore_errors=True)
    _tprt.mpi_finalize()
