"""Entry point of the single-file executable: the same CLI as the `lobbytalks` script."""
import atexit
import ctypes
import os
import shutil
import signal
import sys

from lobbytalks.cli import main

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def end_with_the_launcher() -> None:
    """The single file runs as two processes: a launcher that unpacks the bundle into a
    temporary folder (``sys._MEIPASS``) and starts this one, and waits. Killed outright
    (``kill -9`` on the pid one started, the OOM killer), the launcher can neither stop this
    process nor remove the folder: the server went on serving, holding the port and the
    lock, and each such kill left some 80 MB in /tmp. So this process asks Linux for a
    SIGTERM when the launcher dies (it then stops as on any SIGTERM, a server after
    answering what it received), and removes the folder itself if nobody else is left to."""
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle or not sys.platform.startswith("linux") or not _started_by_the_launcher():
        return  # not the one-file build's child (the script, or a one-folder build)
    launcher = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return

    def remove_the_bundle() -> None:
        if os.getppid() != launcher:  # orphaned: the launcher will not
            shutil.rmtree(bundle, ignore_errors=True)
    atexit.register(remove_the_bundle)  # the first registered: it runs last
    if os.getppid() != launcher:  # it died before the request was made
        sys.exit(128 + signal.SIGTERM)


def _started_by_the_launcher() -> bool:
    try:
        return os.readlink(f"/proc/{os.getppid()}/exe") == os.readlink("/proc/self/exe")
    except OSError:
        return False


if __name__ == "__main__":
    end_with_the_launcher()
    sys.exit(main())
