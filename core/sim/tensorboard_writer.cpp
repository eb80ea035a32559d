// Protobuf encoding of Event/Summary/TensorProto (the fields tf_event_decoder.cpp reads) and the file writer.
#include "core/sim/tensorboard_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/parse/tfrecord_framing.hpp"

namespace msmon {

namespace {

void varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

void key(std::string& out, int field, int wire) {
    varint(out, static_cast<std::uint64_t>(field) << 3 | static_cast<unsigned>(wire));
}

void bytes_field(std::string& out, int field, std::string_view data) {
    key(out, field, 2);
    varint(out, data.size());
    out.append(data);
}

void fixed64_field(std::string& out, int field, double v) {
    key(out, field, 1);
    char b[8];
    std::memcpy(b, &v, 8);
    out.append(b, 8);
}

void fixed32_field(std::string& out, int field, float v) {
    key(out, field, 5);
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
}

std::string metadata(std::string_view plugin) {
    std::string plugin_data;
    bytes_field(plugin_data, 1, plugin);
    std::string m;
    bytes_field(m, 1, plugin_data);
    return m;
}

std::string value_bytes(const TfValueSpec& v) {
    std::string out;
    bytes_field(out, 1, v.tag);
    if (v.form == TfValueSpec::Form::simple) {
        fixed32_field(out, 2, static_cast<float>(v.number));
        return out;
    }
    std::string tensor;
    key(tensor, 1, 0);
    if (v.form == TfValueSpec::Form::text) {
        varint(tensor, 7);           // DT_STRING
        bytes_field(tensor, 2, "");  // shape []
        bytes_field(tensor, 8, v.text);
    } else if (v.form == TfValueSpec::Form::tensor_float) {
        varint(tensor, 1);  // DT_FLOAT, shape [], one float_val as TF 2.x writes it
        bytes_field(tensor, 2, "");
        std::string packed;
        const float f = static_cast<float>(v.number);
        char b[4];
        std::memcpy(b, &f, 4);
        packed.append(b, 4);
        bytes_field(tensor, 5, packed);
    } else {
        varint(tensor, 2);  // DT_DOUBLE in tensor_content, as tf.summary.scalar of a float64 may
        bytes_field(tensor, 2, "");
        char b[8];
        std::memcpy(b, &v.number, 8);
        bytes_field(tensor, 4, std::string_view(b, 8));
    }
    if (v.metadata) bytes_field(out, 9, metadata(v.form == TfValueSpec::Form::text ? "text" : "scalars"));
    bytes_field(out, 8, tensor);
    return out;
}

}  // namespace

std::string encode_summary_event(double wall_time, std::int64_t step, const std::vector<TfValueSpec>& values) {
    std::string summary;
    for (const auto& v : values) bytes_field(summary, 1, value_bytes(v));
    std::string event;
    fixed64_field(event, 1, wall_time);
    if (step != 0) {
        key(event, 2, 0);
        varint(event, static_cast<std::uint64_t>(step));
    }
    bytes_field(event, 5, summary);
    return event;
}

std::string encode_file_version_event(double wall_time) {
    std::string event;
    fixed64_field(event, 1, wall_time);
    bytes_field(event, 3, "brain.Event:2");
    return event;
}

std::string encode_graph_event(double wall_time, std::string_view graph_def) {
    std::string event;
    fixed64_field(event, 1, wall_time);
    bytes_field(event, 4, graph_def);
    return event;
}

TfEventWriter::TfEventWriter(std::string path, double wall_time) : path_(std::move(path)) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0 || st.st_size == 0) ok_ = write_event(encode_file_version_event(wall_time));
}

bool TfEventWriter::write_event(std::string_view event_bytes) {
    const std::string record = frame_record(event_bytes);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        error_ = "cannot open " + path_ + ": " + std::strerror(errno);
        return ok_ = false;
    }
    const ssize_t n = ::write(fd, record.data(), record.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(record.size())) {
        error_ = "cannot write " + path_;
        return ok_ = false;
    }
    bytes_ += n;
    return true;
}

bool TfEventWriter::scalar(std::string_view tag, std::int64_t step, double value, double wall_time) {
    return write_event(
        encode_summary_event(wall_time, step, {{std::string(tag), TfValueSpec::Form::simple, value, "", false}}));
}

bool TfEventWriter::text(std::string_view tag, std::int64_t step, std::string_view text, double wall_time) {
    return write_event(encode_summary_event(wall_time, step,
                                            {{std::string(tag), TfValueSpec::Form::text, 0, std::string(text), true}}));
}

}  // namespace msmon
