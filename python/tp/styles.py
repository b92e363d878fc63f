"""Parallel styles: what a plan maps module names to (docs/Plans.md)."""
from ._tprt import Error


class ParallelStyle:
    """A plan entry's style; `axis` picks the mesh axis on meshes with
    more than one axis besides the data-parallel one."""
    style = None

    def __init__(self, axis=None):
        if axis is not None and not isinstance(axis, str):
            raise Error("%s(axis=%r): give a mesh axis name"
                        % (type(self).__name__, axis))
        self.axis = axis

    def plan_value(self):
        """The style as a plan file writes it: colwise, rowwise@tp, ..."""
        return self.style + ("@" + self.axis if self.axis else "")

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__,
                           "axis=%r" % self.axis if self.axis else "")


class ColwiseParallel(ParallelStyle):
    """Split a Linear's output features (an Embedding's dim)."""
    style = "colwise"


class RowwiseParallel(ParallelStyle):
    """Split a Linear's input features (an Embedding's vocabulary); the
    partial sums are reduced where they are next read whole."""
    style = "rowwise"


class SequenceParallel(ParallelStyle):
    """Replicate the module's parameters; split its activations on dim 1."""
    style = "sequence"


class NoParallel(ParallelStyle):
    """Keep the module whole on every device."""
    style = "replicate"


_BY_NAME = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel,
            "sequence": SequenceParallel, "replicate": NoParallel}


def plan_entries(plan):
    """{module: style} -> {module: "colwise@tp"}; styles may be given as
    objects or as the plan file's words."""
    if not isinstance(plan, dict):
        raise Error("the plan is a dict of module name -> style, e.g. "
                    "{'fc1': tp.ColwiseParallel()}; got %s"
                    % type(plan).__name__)
    entries = {}
    for module, style in plan.items():
        if not isinstance(module, str):
            raise Error("plan entry %r: module names are strings "
                        "(model.named_modules())" % (module,))
        if isinstance(style, str) and style.split("@")[0] in _BY_NAME:
            entries[module] = style
        elif isinstance(style, ParallelStyle):
            entries[module] = style.plan_value()
        else:
            raise Error("plan entry '%s': %r is not a style (tp.ColwiseParallel"
                        "(), tp.RowwiseParallel(), tp.SequenceParallel(), "
                        "tp.NoParallel())" % (module, style))
    return entries
