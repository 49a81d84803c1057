"""Send a workflow script's logging (and any traceback) to the rule's log file."""
import logging
import sys


def to_log_file(path: str) -> None:
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler, logging.StreamHandler(sys.stderr)])
    log = logging.getLogger("rnnrepro.workflow")

    def log_uncaught(kind, value, traceback):
        log.error("%s: %s", kind.__name__, value, exc_info=(kind, value, traceback))

    sys.excepthook = log_uncaught
