"""torch's ``torch.utils.data._utils`` path, which scripts import collate helpers from
(``from torch.utils.data._utils.collate import default_collate``): see :mod:`.collate`."""

from gradsum.utils.data._utils import collate  # noqa: F401  (an attribute, as in torch)
