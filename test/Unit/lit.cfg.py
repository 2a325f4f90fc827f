# -*- Python -*-
# Runs the GoogleTest unit tests (unittests/) as individual lit tests.

import os

import lit.formats

config.name = "MUON-Unit"
config.suffixes = []
config.test_source_root = config.unittests_dir
config.test_exec_root = config.unittests_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")
