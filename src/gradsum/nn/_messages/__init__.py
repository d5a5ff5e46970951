"""Every gradsum.nn error and warning text in one place.

One function per error, named for it, taking the values the text names and returning the
text; a raise site reads ``raise ValueError(_messages.dropout_probability(p))``. The texts
are PyTorch's phrases (the tests compare many of them with torch's word for word), most
followed by the values involved and the fix. A text written at several sites, or with
different numbers at several sites (``expected {lo}D or {hi}D input``), is one function.

One module per subject, named like torch.nn's files: ``module`` (Module, containers, lazy
modules, parameters and buffers, hooks), ``functional`` (the argument checks F functions
share: reduction=, input ranks; linear, activations, dropout), ``loss``,
``conv`` (conv, pool, pad), ``normalization``, ``sparse`` (embedding, embedding_bag),
``vision`` (interpolate, grid_sample, affine_grid), ``rnn``, ``transformer`` (and
attention), ``parallel`` (DDP), ``utils`` (clip_grad, fusion, parametrize, rnn packing,
spectral/weight norm, stateless), ``init``. ``_format`` prints dtypes, sizes and types the
way torch's texts do. This package re-exports them all, so a site names only ``_messages``.
The texts of what F imports from ops (the distances, hardshrink, logsigmoid) are ops':
``gradsum/ops/_messages/`` (ops may not import nn).
"""

# the texts nn shares with the layers below it, written once there
from gradsum.autograd._messages import variable_data_not_tensor  # noqa: F401
from gradsum.nn._messages._format import *  # noqa: F403
from gradsum.nn._messages.conv import *  # noqa: F403
from gradsum.nn._messages.functional import *  # noqa: F403
from gradsum.nn._messages.init import *  # noqa: F403
from gradsum.nn._messages.loss import *  # noqa: F403
from gradsum.nn._messages.module import *  # noqa: F403
from gradsum.nn._messages.normalization import *  # noqa: F403
from gradsum.nn._messages.parallel import *  # noqa: F403
from gradsum.nn._messages.rnn import *  # noqa: F403
from gradsum.nn._messages.sparse import *  # noqa: F403
from gradsum.nn._messages.transformer import *  # noqa: F403
from gradsum.nn._messages.utils import *  # noqa: F403
from gradsum.nn._messages.vision import *  # noqa: F403
from gradsum.ops._messages import (  # noqa: F401
    conv_same_padding_strided,
    loss_invalid_reduction,
    wrap_dim_out_of_range,
)
