"""Every gradsum.ops error and warning text in one place.

One function per error, named for it, taking the values the text names and returning the
text; a raise site reads ``raise RuntimeError(_messages.expected_common_dtype_floating_point(dt))``
(after ``from gradsum.ops import _messages``). The texts are PyTorch's phrases (the tests
compare many of them with torch's word for word), followed by the values involved and the
fix. A text written at several sites is one function. One module per ops family, named like
the family's file; ``_format`` prints dtypes the way torch's texts do (nn's messages use it
too, since ops may not import nn). This package re-exports them all, so a site names only
``_messages``. The texts the engine and the graph raise are ``gradsum/autograd/_messages.py``'s.
"""

from gradsum.ops._messages._format import *  # noqa: F403
from gradsum.ops._messages.activation import *  # noqa: F403
from gradsum.ops._messages.arithmetic import *  # noqa: F403
from gradsum.ops._messages.blas import *  # noqa: F403
from gradsum.ops._messages.comparison import *  # noqa: F403
from gradsum.ops._messages.conv import *  # noqa: F403
from gradsum.ops._messages.core import *  # noqa: F403
from gradsum.ops._messages.indexing import *  # noqa: F403
from gradsum.ops._messages.inplace import *  # noqa: F403
from gradsum.ops._messages.linalg import *  # noqa: F403
from gradsum.ops._messages.loss import *  # noqa: F403
from gradsum.ops._messages.normalization import *  # noqa: F403
from gradsum.ops._messages.pad import *  # noqa: F403
from gradsum.ops._messages.pointwise import *  # noqa: F403
from gradsum.ops._messages.pool import *  # noqa: F403
from gradsum.ops._messages.rearrange import *  # noqa: F403
from gradsum.ops._messages.reduction import *  # noqa: F403
from gradsum.ops._messages.sampling import *  # noqa: F403
from gradsum.ops._messages.scan import *  # noqa: F403
from gradsum.ops._messages.sorting import *  # noqa: F403
from gradsum.ops._messages.special import *  # noqa: F403
from gradsum.ops._messages.upsample import *  # noqa: F403
from gradsum.ops._messages.views import *  # noqa: F403
