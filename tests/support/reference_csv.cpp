// The test oracle: a character-at-a-time state machine and strtod, sharing no code with the engine.
#include "tests/support/reference_csv.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace msmon::test {

std::vector<std::vector<std::string>> parse_csv_reference(const std::string& text) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    bool quoted = false, any = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        any = true;
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            record.push_back(field);
            field.clear();
        } else if (c == '\n') {
            if (!field.empty() && field.back() == '\r') field.pop_back();
            record.push_back(field);
            records.push_back(record);
            record.clear();
            field.clear();
            any = false;
        } else {
            field += c;
        }
    }
    if (any) {
        record.push_back(field);
        records.push_back(record);
    }
    return records;
}

bool reference_double(const std::string& cell, double& out) {
    if (cell == "nan" || cell == "NaN") {
        out = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (cell == "inf") {
        out = std::numeric_limits<double>::infinity();
        return true;
    }
    if (cell == "-inf") {
        out = -std::numeric_limits<double>::infinity();
        return true;
    }
    if (cell.empty()) return false;
    char* end = nullptr;
    out = std::strtod(cell.c_str(), &end);
    return end == cell.c_str() + cell.size();
}

}  // namespace msmon::test
