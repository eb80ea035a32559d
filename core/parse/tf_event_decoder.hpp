// The protobuf wire format of TensorBoard's Event and Summary messages, decoded by hand for the fields msmon
// uses: wall_time, step, file_version, and each summary value's tag, simple_value, scalar/string tensor and
// plugin name. Everything else (graph_def, images, histograms, ...) is skipped by its wire type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

// A TensorProto reduced to what a scalar or a text summary needs.
struct TfTensor {
    int dtype = 0;              // tensorflow DataType (1 float, 2 double, 3 int32, 7 string, 9 int64, 19 half, ...)
    int dims = 0;               // rank of tensor_shape
    std::int64_t elements = 1;  // product of the dims (1 for a scalar)
    bool has_number = false;    // the first element, if numeric
    double number = 0;
    std::vector<std::string_view> strings;  // string_val, DT_STRING
};

struct TfSummaryValue {
    std::string_view tag;
    std::string_view plugin_name;  // from metadata.plugin_data.plugin_name; empty when the value has no metadata
    bool has_simple = false;
    float simple_value = 0;
    bool has_tensor = false;
    TfTensor tensor;
};

struct TfEvent {
    double wall_time = 0;
    std::int64_t step = 0;
    std::string_view file_version;  // "brain.Event:2" in a file's first event
    bool has_summary = false;
    int other_payload = 0;  // field number of a non-summary payload (4 graph_def, 6 log_message, 9 meta_graph_def, ...)
    std::vector<TfSummaryValue> values;  // views into the record's bytes
};

// Decodes one Event record. False (with `error`) if the bytes are not a well-formed Event. `out` is reused.
bool decode_tf_event(std::string_view data, TfEvent& out, std::string& error);

// The field number of the first length-delimited field of an Event, from a record's first bytes (to say what a
// record too large to decode was); 0 if unknown.
int peek_tf_event_payload(std::string_view prefix);

// Half-precision and bfloat16 bit patterns as floats.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

}  // namespace msmon
