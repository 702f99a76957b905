"""Transport only: process groups and collectives with named errors. Knows nothing of models."""

from unison.comm.communicator import Communicator, LocalCommunicator, connect
from unison.comm.functional import differentiable_all_reduce

__all__ = ["Communicator", "LocalCommunicator", "connect", "differentiable_all_reduce"]
