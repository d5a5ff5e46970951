"""``gradsum.optim``: optimizers and learning-rate schedulers with torch.optim's names,
defaults, update formulas and state layout.

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> _ = gradsum.manual_seed(0)
    >>> model = nn.Linear(2, 1)
    >>> opt = optim.AdamW(model.parameters(), lr=1e-2)
    >>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     model(gradsum.ones(4, 2)).pow(2).mean().backward()
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.005]
"""

from __future__ import annotations

from gradsum.optim import lr_scheduler, swa_utils
from gradsum.optim._stateless import swap_in_optimizer_params_and_state
from gradsum.optim.adadelta import Adadelta
from gradsum.optim.adafactor import Adafactor
from gradsum.optim.adagrad import Adagrad
from gradsum.optim.adam import Adam, AdamW
from gradsum.optim.adamax import Adamax
from gradsum.optim.asgd import ASGD
from gradsum.optim.lbfgs import LBFGS
from gradsum.optim.muon import Muon
from gradsum.optim.nadam import NAdam
from gradsum.optim.optimizer import Optimizer
from gradsum.optim.radam import RAdam
from gradsum.optim.rmsprop import RMSprop
from gradsum.optim.rprop import Rprop
from gradsum.optim.sgd import SGD

__all__ = [
    "ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
    "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "lr_scheduler",
    "swa_utils", "swap_in_optimizer_params_and_state",
]
