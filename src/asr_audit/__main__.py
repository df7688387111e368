import sys

from asr_audit.cli import main

sys.exit(main())
