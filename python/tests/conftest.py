"""Makes `import fa2` work from a checkout: the package is python/fa2."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
