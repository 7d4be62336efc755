"""Entry point of the single-file executable: the same CLI as the `lobbytalks` script."""
import sys

from lobbytalks.cli import main

if __name__ == "__main__":
    sys.exit(main())
