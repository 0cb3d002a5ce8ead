"""python -m relay_bridge.lanes.open URL: `wmcp-top open` headless."""

import sys

from relay_bridge.lanes.open.lane import main

sys.exit(main())
