"""Pictures of the backward graph: Graphviz DOT text with no dependency, rendering optional.

The picture follows the gradient: from the output (an ellipse) through every ``grad_fn`` node
(boxes named like ``node.name()``, with the shapes and bytes of what they saved, grey and
dashed once a backward freed them) to each leaf's ``AccumulateGrad`` sink and the leaf itself.
Every edge is drawn, so a leaf reached along several paths shows each of them, and its sink is
labelled with its fan-in; a leaf with fan-in above one (a tied weight, ``x * x``) is drawn in
red: that is where the multivariable chain rule sums.

Example:
    >>> import gradsum
    >>> from gradsum.toolkit import to_dot
    >>> w = gradsum.ones(2, 2, requires_grad=True)
    >>> x = gradsum.ones(3, 2)
    >>> y = (x @ w) @ w                     # w used twice: fan-in 2
    >>> dot = to_dot(y.sum(), params={"w": w})
    >>> "fan-in 2" in dot and 'label="w' in dot
    True
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradsum.autograd.graph import AccumulateGrad
from gradsum.autograd.saved import saved_array
from gradsum.toolkit._hub import is_released, iter_nodes, named_params, saved_bytes, shape_str

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.autograd.graph import Node

__all__ = ["draw", "to_dot"]

_FANIN_COLOR = "#d62728"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _saved_info(node: Node) -> tuple[list[str], str | None]:
    """Shapes of the saved tensors (inputs first) and the output shape when it was saved."""
    shapes: list[str] = []
    out_shape = None
    for s in node._saved or ():
        arr = saved_array(s)
        if arr is None:
            continue
        shp = str(tuple(arr.shape))
        shapes.append(shp)
        if s._is_output:
            out_shape = shp
    return shapes, out_shape


def to_dot(
    tensors: Tensor | Sequence[Tensor],
    params: Any = None,
    *,
    show_saved: bool = True,
    max_nodes: int = 5000,
) -> str:
    """The backward graph of ``tensors`` as Graphviz DOT text.

    Args:
        tensors: the output(s) whose graph to draw.
        params: names for the leaves: a module, ``named_parameters()``, a ``{name: tensor}``
            dict or a list of tensors.
        show_saved: label nodes with their saved tensors' shapes and bytes.
        max_nodes: stop after this many nodes (a note says the picture is cut).

    Returns:
        DOT text; ``dot -Tsvg`` renders it (or :func:`draw`).

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import to_dot
        >>> x = gradsum.ones(3, requires_grad=True)
        >>> print(to_dot((x * x).sum()))  # doctest: +ELLIPSIS
        digraph gradsum {
        ...
          n0 [label="SumBackward0\\nout ()"];
        ...
    """
    from gradsum._tensor import Tensor

    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    names = {id(p): n for n, p in named_params(params)}
    ids: dict[int, str] = {}

    def nid(obj: Any) -> str:
        key = id(obj)
        if key not in ids:
            ids[key] = f"n{len(ids)}"
        return ids[key]

    lines = [
        "digraph gradsum {",
        "  rankdir=TB;",
        '  node [fontname="Helvetica", fontsize=10, shape=box, style=rounded];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    body: list[str] = []
    edges: list[str] = []
    root_nodes: list[Node] = []
    for i, t in enumerate(roots):
        rid = f"out{i}"
        default = "output" if len(roots) == 1 else f"output {i}"
        label = f"{names.get(id(t), default)}\n{shape_str(t)} {t.dtype.name}"
        body.append(f"  {rid} [label={_q(label)}, shape=ellipse, style=filled, "
                    'fillcolor="#cfe2f3"];')
        if t._grad_fn is not None:
            edges.append(f"  {rid} -> {nid(t._grad_fn)};")
            root_nodes.append(t._grad_fn)
        elif t._requires_grad:
            edges.append(f"  {rid} -> {nid(t)} [style=dashed];")
            body.append(_leaf_line(nid(t), t, names, 0))

    nodes = iter_nodes(root_nodes, limit=max_nodes)
    fanin: dict[int, int] = {}
    for n in nodes:
        for c, _ in n._next:
            if c is not None:
                fanin[id(c)] = fanin.get(id(c), 0) + 1
    root_out = {id(t._grad_fn): shape_str(t) for t in roots if t._grad_fn is not None}
    for n in nodes:
        me = nid(n)
        if isinstance(n, AccumulateGrad):
            leaf = n.variable
            k = fanin.get(id(n), 0)
            hot = k > 1
            color = f', color="{_FANIN_COLOR}", fontcolor="{_FANIN_COLOR}", penwidth=2' \
                if hot else ""
            sink_label = _q("AccumulateGrad\nfan-in " + str(k))
            body.append(f"  {me} [label={sink_label}, shape=box, style=solid{color}];")
            lid = nid(leaf)
            body.append(_leaf_line(lid, leaf, names, k))
            hot_edge = f' [color="{_FANIN_COLOR}", penwidth=2]' if hot else ""
            edges.append(f"  {me} -> {lid}{hot_edge};")
            continue
        parts = [n.name()]
        released = is_released(n)
        out_shape = root_out.get(id(n))
        shapes, saved_out = _saved_info(n) if not released else ([], None)
        out_shape = out_shape or saved_out
        if out_shape is not None:
            parts.append(f"out {out_shape}")
        if show_saved:
            if released:
                parts.append("saved: freed")
            elif shapes:
                parts.append(f"saved {' '.join(shapes)} = {_bytes(saved_bytes(n))}")
        style = ', style="rounded,dashed", color=gray50, fontcolor=gray40' if released else ""
        body.append(f"  {me} [label={_q(chr(10).join(parts))}{style}];")
        multi = sum(1 for c, _ in n._next if c is not None) > 1
        for i, (c, _) in enumerate(n._next):
            if c is not None:
                edges.append(f"  {me} -> {nid(c)}" + (f" [label={_q(str(i))}]" if multi
                                                     else "") + ";")
    if len(nodes) >= max_nodes:
        body.append(f"  cut [label={_q(f'graph cut at {max_nodes} nodes')}, shape=note];")
    return "\n".join(lines + body + edges + ["}"]) + "\n"


def _leaf_line(lid: str, leaf: Tensor, names: dict[int, str], fanin: int) -> str:
    name = names.get(id(leaf), "leaf")
    label = f"{name}\n{shape_str(leaf)} {leaf.dtype.name}"
    if fanin > 1:
        label += f"\nfan-in {fanin}: gradients summed"
        extra = f', color="{_FANIN_COLOR}", penwidth=2'
    else:
        extra = ""
    return (f"  {lid} [label={_q(label)}, shape=box, style=filled, "
            f'fillcolor="#d9ead3"{extra}];')


def draw(tensors: Tensor | Sequence[Tensor], path: str, params: Any = None,
         **kwargs: Any) -> str:
    """Render the graph of ``tensors`` to ``path`` (``.svg`` or ``.png``; other Graphviz
    formats by suffix). Needs the ``graphviz`` Python package and Graphviz's ``dot`` program.

    Returns:
        ``path``.

    Raises:
        ImportError: the ``graphviz`` package is missing.
        RuntimeError: the ``dot`` program is missing.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import draw
        >>> x = gradsum.ones(2, requires_grad=True)
        >>> try:
        ...     _ = draw(x * 2, "graph.svg")
        ... except (ImportError, RuntimeError) as e:
        ...     print("needs graphviz" if "graphviz" in str(e) else e)
        ... else:
        ...     import os; os.remove("graph.svg"); print("needs graphviz")
        needs graphviz
    """
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "svg"
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(
            "draw() needs the graphviz Python package: pip install graphviz (in a clone of "
            "gradsum: pip install -e '.[graph]'), plus the Graphviz 'dot' program "
            "(apt-get install graphviz, brew install graphviz). to_dot() works "
            "without either: save its text as graph.dot and run 'dot -Tsvg graph.dot'."
        ) from e
    if shutil.which("dot") is None:
        raise RuntimeError(
            "draw() found the graphviz package but not Graphviz's 'dot' program on PATH: "
            "install Graphviz (apt-get install graphviz, brew install graphviz, conda install "
            "graphviz). to_dot() returns the DOT text without it."
        )
    data = graphviz.Source(to_dot(tensors, params, **kwargs)).pipe(format=fmt)
    with open(path, "wb") as f:
        f.write(data)
    return path
