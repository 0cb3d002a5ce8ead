import sys

from relay_bridge.lanes.cdp.cli import main

if __name__ == "__main__":
    sys.exit(main())
