# The runtime's gtest binaries (*-unittests), each test case a lit test.
import os

import lit.formats

config.name = "tp-unittests"
config.test_format = lit.formats.GoogleTest(".", "unittests")
config.test_source_root = os.path.join(config.tp_obj_root, "unittests")
config.test_exec_root = config.test_source_root
