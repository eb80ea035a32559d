// Writes TensorBoard event files as TensorFlow and tensorboardX do: framed records (tfrecord_framing.hpp) of
// Event protobufs — scalars as simple_value or as TF 2.x tensors with the scalars plugin, text summaries as
// string tensors with the text plugin. `msmon simulate --tensorboard` and the tests use it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

// One summary value to encode.
struct TfValueSpec {
    enum class Form { simple, tensor_float, tensor_double, text };
    std::string tag;
    Form form = Form::simple;
    double number = 0;  // simple and tensor forms (simple and tensor_float store it as float32)
    std::string text;   // text form
    bool metadata =
        false;  // attach SummaryMetadata with the plugin name (scalars / text), as TF 2.x does on a tag's first value
};

// Event bytes (not framed).
std::string encode_summary_event(double wall_time, std::int64_t step, const std::vector<TfValueSpec>& values);
std::string encode_file_version_event(double wall_time);                       // "brain.Event:2"
std::string encode_graph_event(double wall_time, std::string_view graph_def);  // Event.graph_def (field 4)

// Appends framed records to one event file, one write() per record.
class TfEventWriter {
public:
    // Creates or appends to `path`; a new file starts with the file_version event.
    TfEventWriter(std::string path, double wall_time);
    bool ok() const { return ok_; }
    const std::string& error() const { return error_; }
    bool write_event(std::string_view event_bytes);
    bool scalar(std::string_view tag, std::int64_t step, double value, double wall_time);
    bool text(std::string_view tag, std::int64_t step, std::string_view text, double wall_time);
    std::int64_t bytes() const { return bytes_; }

private:
    std::string path_;
    std::string error_;
    bool ok_ = true;
    std::int64_t bytes_ = 0;
};

}  // namespace msmon
