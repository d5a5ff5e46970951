"""torch's ``torch.nn.modules.rnn`` path: ``from torch.nn.modules.rnn import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.rnn.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
