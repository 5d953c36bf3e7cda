"""The package's error type, kept in its own module so the Rust layer can
raise it and worker processes can pickle it."""


class ScenarioError(ValueError):
    """A scenario, override or grid that cannot be used.

    ``key`` is the dotted scenario key at fault (``"client.send_policy"``),
    empty when the error is not about one key; ``file`` and ``line`` locate it
    when it comes from a file."""

    def __init__(self, message, key="", file="", line=None):
        super().__init__(message)
        self.key = key
        self.file = file
        self.line = line

    def __reduce__(self):
        return (type(self), (self.args[0], self.key, self.file, self.line))
