"""Device meshes: named axes, major first (PyTorch's DeviceMesh)."""
from ._tprt import Error


class DeviceMesh:
    """A mesh of devices with named axes, e.g. DeviceMesh({"dp": 2, "tp": 2}).

    The number of ranks is the product of the sizes. `device_type` is
    "cpu" (the only target the package runs; tp-run runs CUDA programs).
    `mesh["tp"]` is the one-axis mesh of that axis.
    """

    def __init__(self, axes, device_type="cpu"):
        if not isinstance(axes, dict) or not axes:
            raise Error("DeviceMesh takes named axes, e.g. "
                        "DeviceMesh({'dp': 2, 'tp': 2}); got %r" % (axes,))
        for name, size in axes.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise Error("DeviceMesh: axis name %r is not an identifier"
                            % (name,))
            if not isinstance(size, int) or size < 1:
                raise Error("DeviceMesh: axis '%s' has size %r; give a "
                            "positive integer" % (name, size))
        if device_type != "cpu":
            raise Error("DeviceMesh: device_type '%s': the Python package "
                        "runs CPU programs (tp-compile --target cuda and "
                        "tp-run --backend nccl run on GPUs)" % device_type)
        self.axes = dict(axes)
        self.device_type = device_type

    @property
    def mesh_dim_names(self):
        return tuple(self.axes)

    @property
    def shape(self):
        return tuple(self.axes.values())

    def size(self):
        n = 1
        for s in self.axes.values():
            n *= s
        return n

    def __getitem__(self, name):
        if name not in self.axes:
            raise Error("DeviceMesh %s has no axis '%s'" % (self, name))
        return DeviceMesh({name: self.axes[name]}, self.device_type)

    def describe(self):
        """What tp-compile --mesh takes: dp=2,tp=2."""
        return ",".join("%s=%d" % kv for kv in self.axes.items())

    def __repr__(self):
        return "DeviceMesh(%r)" % (self.axes,)

    __str__ = describe


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None):
    """PyTorch's init_device_mesh: init_device_mesh("cpu", (2, 2),
    mesh_dim_names=("dp", "tp")). A 1-D mesh without names is "tp"."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is None:
        if len(mesh_shape) != 1:
            raise Error("init_device_mesh: name the axes of a %d-D mesh "
                        "(mesh_dim_names=('dp', 'tp'))" % len(mesh_shape))
        mesh_dim_names = ("tp",)
    if len(mesh_dim_names) != len(mesh_shape):
        raise Error("init_device_mesh: %d names for %d axes"
                    % (len(mesh_dim_names), len(mesh_shape)))
    return DeviceMesh(dict(zip(mesh_dim_names, mesh_shape)), device_type)
