// Protobuf wire decoding of tensorflow.Event (event.proto), Summary (summary.proto) and TensorProto
// (tensor.proto): varints, fixed32/64 and length-delimited fields; unknown fields skipped by wire type.
#include "core/parse/tf_event_decoder.hpp"

#include <cmath>
#include <cstring>

namespace msmon {

namespace {

enum WireType { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// DataType values (tensorflow/core/framework/types.proto).
enum DataType {
    DT_FLOAT = 1,
    DT_DOUBLE = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 5,
    DT_INT8 = 6,
    DT_STRING = 7,
    DT_INT64 = 9,
    DT_BOOL = 10,
    DT_BFLOAT16 = 14,
    DT_UINT16 = 17,
    DT_HALF = 19,
    DT_UINT32 = 22,
    DT_UINT64 = 23,
};

class Wire {
public:
    explicit Wire(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
    bool done() const { return p_ >= end_; }
    bool failed() const { return failed_; }

    bool varint(std::uint64_t& v) {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p_ >= end_) return fail();
            const auto b = static_cast<unsigned char>(*p_++);
            v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return fail();
    }
    bool key(int& field, int& wire) {
        std::uint64_t k = 0;
        if (!varint(k)) return false;
        field = static_cast<int>(k >> 3);
        wire = static_cast<int>(k & 7);
        return field > 0 || fail();
    }
    bool fixed32(std::uint32_t& v) {
        if (end_ - p_ < 4) return fail();
        std::memcpy(&v, p_, 4);
        p_ += 4;
        return true;
    }
    bool fixed64(std::uint64_t& v) {
        if (end_ - p_ < 8) return fail();
        std::memcpy(&v, p_, 8);
        p_ += 8;
        return true;
    }
    bool bytes(std::string_view& v) {
        std::uint64_t n = 0;
        if (!varint(n)) return false;
        if (n > static_cast<std::uint64_t>(end_ - p_)) return fail();
        v = std::string_view(p_, static_cast<std::size_t>(n));
        p_ += n;
        return true;
    }
    bool skip(int wire) {
        std::uint64_t u = 0;
        std::uint32_t w = 0;
        std::string_view s;
        switch (wire) {
            case kVarint:
                return varint(u);
            case kFixed64:
                return fixed64(u);
            case kLength:
                return bytes(s);
            case kFixed32:
                return fixed32(w);
            default:
                return fail();  // groups (3, 4) are not used by these messages
        }
    }

private:
    bool fail() {
        failed_ = true;
        return false;
    }
    const char* p_;
    const char* end_;
    bool failed_ = false;
};

double as_double(std::uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}

float as_float(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Calls `each(raw)` for every element of a repeated scalar field, packed (wire 2) or not.
template <typename Each>
bool repeated(Wire& w, int wire, int element_wire, Each each) {
    if (wire == kLength) {
        std::string_view packed;
        if (!w.bytes(packed)) return false;
        Wire in(packed);
        while (!in.done()) {
            std::uint64_t v = 0;
            std::uint32_t v32 = 0;
            if (element_wire == kVarint ? !in.varint(v) : element_wire == kFixed32 ? !in.fixed32(v32) : !in.fixed64(v))
                return false;
            each(element_wire == kFixed32 ? v32 : v);
        }
        return true;
    }
    if (wire != element_wire) return w.skip(wire);
    std::uint64_t v = 0;
    std::uint32_t v32 = 0;
    if (element_wire == kVarint ? !w.varint(v) : element_wire == kFixed32 ? !w.fixed32(v32) : !w.fixed64(v))
        return false;
    each(element_wire == kFixed32 ? v32 : v);
    return true;
}

bool decode_shape(std::string_view data, TfTensor& t) {
    Wire w(data);
    t.dims = 0;
    t.elements = 1;
    int field = 0, wire = 0;
    while (!w.done()) {
        if (!w.key(field, wire)) return false;
        if (field == 2 && wire == kLength) {  // Dim { int64 size = 1; string name = 2; }
            std::string_view dim;
            if (!w.bytes(dim)) return false;
            Wire d(dim);
            std::int64_t size = 0;
            while (!d.done()) {
                int f = 0, dw = 0;
                if (!d.key(f, dw)) return false;
                std::uint64_t v = 0;
                if (f == 1 && dw == kVarint) {
                    if (!d.varint(v)) return false;
                    size = static_cast<std::int64_t>(v);
                } else if (!d.skip(dw)) {
                    return false;
                }
            }
            ++t.dims;
            t.elements *= size;
        } else if (!w.skip(wire)) {
            return false;
        }
    }
    return true;
}

// The first element of raw tensor_content, little-endian, by dtype.
void number_from_content(std::string_view c, TfTensor& t) {
    auto take = [&](std::size_t n, auto convert) {
        if (c.size() < n) return;
        t.number = convert(c.data());
        t.has_number = true;
    };
    switch (t.dtype) {
        case DT_FLOAT:
            take(4, [](const char* p) {
                float f;
                std::memcpy(&f, p, 4);
                return static_cast<double>(f);
            });
            break;
        case DT_DOUBLE:
            take(8, [](const char* p) {
                double d;
                std::memcpy(&d, p, 8);
                return d;
            });
            break;
        case DT_INT32:
            take(4, [](const char* p) {
                std::int32_t v;
                std::memcpy(&v, p, 4);
                return static_cast<double>(v);
            });
            break;
        case DT_UINT32:
            take(4, [](const char* p) {
                std::uint32_t v;
                std::memcpy(&v, p, 4);
                return static_cast<double>(v);
            });
            break;
        case DT_INT64:
            take(8, [](const char* p) {
                std::int64_t v;
                std::memcpy(&v, p, 8);
                return static_cast<double>(v);
            });
            break;
        case DT_UINT64:
            take(8, [](const char* p) {
                std::uint64_t v;
                std::memcpy(&v, p, 8);
                return static_cast<double>(v);
            });
            break;
        case DT_INT16:
            take(2, [](const char* p) {
                std::int16_t v;
                std::memcpy(&v, p, 2);
                return static_cast<double>(v);
            });
            break;
        case DT_UINT16:
            take(2, [](const char* p) {
                std::uint16_t v;
                std::memcpy(&v, p, 2);
                return static_cast<double>(v);
            });
            break;
        case DT_INT8:
            take(1, [](const char* p) { return static_cast<double>(static_cast<std::int8_t>(*p)); });
            break;
        case DT_UINT8:
        case DT_BOOL:
            take(1, [](const char* p) { return static_cast<double>(static_cast<unsigned char>(*p)); });
            break;
        case DT_HALF:
            take(2, [](const char* p) {
                std::uint16_t v;
                std::memcpy(&v, p, 2);
                return static_cast<double>(half_to_float(v));
            });
            break;
        case DT_BFLOAT16:
            take(2, [](const char* p) {
                std::uint16_t v;
                std::memcpy(&v, p, 2);
                return static_cast<double>(bfloat16_to_float(v));
            });
            break;
        default:
            break;
    }
}

bool decode_tensor(std::string_view data, TfTensor& t) {
    Wire w(data);
    t = TfTensor{};
    std::string_view content;
    int field = 0, wire = 0;
    auto first = [&](double v) {
        if (!t.has_number) {
            t.number = v;
            t.has_number = true;
        }
    };
    bool ok = true;
    while (ok && !w.done()) {
        if (!w.key(field, wire)) return false;
        std::uint64_t v = 0;
        std::string_view s;
        switch (field) {
            case 1:  // dtype
                if (wire != kVarint) {
                    ok = w.skip(wire);
                    break;
                }
                ok = w.varint(v);
                t.dtype = static_cast<int>(v);
                break;
            case 2:  // tensor_shape
                if (wire != kLength) {
                    ok = w.skip(wire);
                    break;
                }
                ok = w.bytes(s) && decode_shape(s, t);
                break;
            case 4:  // tensor_content
                if (wire != kLength) {
                    ok = w.skip(wire);
                    break;
                }
                ok = w.bytes(content);
                break;
            case 5:  // float_val
                ok = repeated(w, wire, kFixed32,
                              [&](std::uint64_t b) { first(as_float(static_cast<std::uint32_t>(b))); });
                break;
            case 6:  // double_val
                ok = repeated(w, wire, kFixed64, [&](std::uint64_t b) { first(as_double(b)); });
                break;
            case 7:  // int_val (int32, int16, int8, uint8, uint16)
                ok = repeated(w, wire, kVarint,
                              [&](std::uint64_t b) { first(static_cast<double>(static_cast<std::int32_t>(b))); });
                break;
            case 8:  // string_val
                if (wire != kLength) {
                    ok = w.skip(wire);
                    break;
                }
                ok = w.bytes(s);
                t.strings.push_back(s);
                break;
            case 10:  // int64_val
                ok = repeated(w, wire, kVarint,
                              [&](std::uint64_t b) { first(static_cast<double>(static_cast<std::int64_t>(b))); });
                break;
            case 11:  // bool_val
                ok = repeated(w, wire, kVarint, [&](std::uint64_t b) { first(b ? 1.0 : 0.0); });
                break;
            case 13:  // half_val: half or bfloat16 bits in an int32
                ok = repeated(w, wire, kVarint, [&](std::uint64_t b) {
                    const auto bits = static_cast<std::uint16_t>(b);
                    first(t.dtype == DT_BFLOAT16 ? bfloat16_to_float(bits) : half_to_float(bits));
                });
                break;
            case 16:  // uint32_val
                ok = repeated(w, wire, kVarint,
                              [&](std::uint64_t b) { first(static_cast<double>(static_cast<std::uint32_t>(b))); });
                break;
            case 17:  // uint64_val
                ok = repeated(w, wire, kVarint, [&](std::uint64_t b) { first(static_cast<double>(b)); });
                break;
            default:
                ok = w.skip(wire);
        }
    }
    if (!ok) return false;
    if (!t.has_number && !content.empty()) number_from_content(content, t);
    return true;
}

std::string_view plugin_name_of(std::string_view metadata) {
    Wire w(metadata);
    int field = 0, wire = 0;
    while (!w.done()) {
        if (!w.key(field, wire)) return {};
        if (field == 1 && wire == kLength) {  // plugin_data { plugin_name = 1; content = 2; }
            std::string_view pd;
            if (!w.bytes(pd)) return {};
            Wire p(pd);
            while (!p.done()) {
                int f = 0, pw = 0;
                if (!p.key(f, pw)) return {};
                std::string_view name;
                if (f == 1 && pw == kLength) {
                    if (!p.bytes(name)) return {};
                    return name;
                }
                if (!p.skip(pw)) return {};
            }
        } else if (!w.skip(wire)) {
            return {};
        }
    }
    return {};
}

bool decode_value(std::string_view data, TfSummaryValue& v) {
    Wire w(data);
    int field = 0, wire = 0;
    while (!w.done()) {
        if (!w.key(field, wire)) return false;
        std::string_view s;
        if (field == 1 && wire == kLength) {
            if (!w.bytes(v.tag)) return false;
        } else if (field == 2 && wire == kFixed32) {
            std::uint32_t b = 0;
            if (!w.fixed32(b)) return false;
            v.simple_value = as_float(b);
            v.has_simple = true;
        } else if (field == 8 && wire == kLength) {
            if (!w.bytes(s) || !decode_tensor(s, v.tensor)) return false;
            v.has_tensor = true;
        } else if (field == 9 && wire == kLength) {
            if (!w.bytes(s)) return false;
            v.plugin_name = plugin_name_of(s);
        } else if (!w.skip(wire)) {
            return false;
        }
    }
    return true;
}

}  // namespace

float half_to_float(std::uint16_t h) {
    const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    float v;
    if (exp == 0) v = std::ldexp(static_cast<float>(frac), -24);
    else if (exp == 31) v = frac ? NAN : INFINITY;
    else v = std::ldexp(static_cast<float>(frac | 0x400), exp - 25);
    return sign ? -v : v;
}

float bfloat16_to_float(std::uint16_t bits) {
    return as_float(static_cast<std::uint32_t>(bits) << 16);
}

bool decode_tf_event(std::string_view data, TfEvent& out, std::string& error) {
    out.wall_time = 0;
    out.step = 0;
    out.file_version = {};
    out.has_summary = false;
    out.other_payload = 0;
    out.values.clear();
    Wire w(data);
    int field = 0, wire = 0;
    while (!w.done()) {
        if (!w.key(field, wire)) break;
        std::uint64_t u = 0;
        std::string_view s;
        if (field == 1 && wire == kFixed64) {
            if (!w.fixed64(u)) break;
            out.wall_time = as_double(u);
        } else if (field == 2 && wire == kVarint) {
            if (!w.varint(u)) break;
            out.step = static_cast<std::int64_t>(u);
        } else if (field == 3 && wire == kLength) {
            if (!w.bytes(out.file_version)) break;
        } else if (field == 5 && wire == kLength) {  // Summary { repeated Value value = 1; }
            if (!w.bytes(s)) break;
            out.has_summary = true;
            Wire sw(s);
            while (!sw.done()) {
                int f = 0, vw = 0;
                if (!sw.key(f, vw)) break;
                std::string_view vb;
                if (f == 1 && vw == kLength) {
                    if (!sw.bytes(vb)) break;
                    TfSummaryValue& v = out.values.emplace_back();
                    if (!decode_value(vb, v)) {
                        error = "malformed summary value";
                        return false;
                    }
                } else if (!sw.skip(vw)) {
                    break;
                }
            }
            if (sw.failed()) {
                error = "malformed summary";
                return false;
            }
        } else {
            if (wire == kLength && out.other_payload == 0) out.other_payload = field;
            if (!w.skip(wire)) break;
        }
    }
    if (w.failed()) {
        error = "not a protobuf Event (wire format broken)";
        return false;
    }
    return true;
}

int peek_tf_event_payload(std::string_view prefix) {
    Wire w(prefix);
    int field = 0, wire = 0;
    while (!w.done()) {
        if (!w.key(field, wire)) return 0;
        if (wire == kLength) return field;
        if (!w.skip(wire)) return 0;
    }
    return 0;
}

}  // namespace msmon
