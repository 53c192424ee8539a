# SPDX-License-Identifier: BSD-3-Clause
"""The views of the episode core, each in its ecosystem's types:
:mod:`~seer_envs.views.parallel` (PettingZoo's ParallelEnv, one copy),
:mod:`~.vector` (copies x agents arrays), :mod:`~.asynchronous` (its
``send`` / ``recv``), :mod:`~.attributes` (Gymnasium's ``get_attr`` /
``set_attr`` / ``call``) and :mod:`~.agent_vector` (a Gymnasium
``VectorEnv`` with one sub-env per copy and agent).  Build them with
:func:`seer_envs.make`, :func:`seer_envs.vector_env` and
:func:`seer_envs.agent_vector_env`.

Nothing is imported here: each module is imported by its own path."""
