# SPDX-License-Identifier: BSD-3-Clause
"""How an env is copied (:class:`CopiesByReduce`, mixed into the episode
core and every view): never sharing its running engine."""

import copy


class CopiesByReduce:
    """Copying an env: ``copy.copy`` is refused (it would share the running
    engine); ``copy.deepcopy`` goes through ``__reduce__``, as pickling does."""

    def __copy__(self):
        raise TypeError(f"copy.copy({type(self).__name__}) would share the running engine with the "
                        "original; use copy.deepcopy(env) or pickle, or build a new env")

    def __deepcopy__(self, memo):
        fn, args = self.__reduce__()
        return fn(*copy.deepcopy(args, memo))
