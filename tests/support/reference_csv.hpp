// An independent, deliberately simple RFC 4180 reader for tests: the oracle the engine is compared with.
#pragma once

#include <string>
#include <vector>

namespace msmon::test {

// Whole-file parse: records of fields; quoted fields may span lines; "" is a quote.
std::vector<std::vector<std::string>> parse_csv_reference(const std::string& text);

// strtod-based, with Python's nan/inf spellings: the oracle for numeric cells.
bool reference_double(const std::string& cell, double& out);

}  // namespace msmon::test
