"""Exceptions of rigidiff's own."""


class UnknownNameError(KeyError, IndexError, ValueError):
    """A body, joint, parameter, model or other name that does not exist.

    One type for every lookup by name, whichever container it searched: it is a KeyError, an IndexError
    and a ValueError at once, so ``except KeyError``, ``except IndexError`` (the documented type for
    unknown names) and ``except ValueError`` (the type of all other bad input) all catch it. The message
    names what was asked and what exists.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
