// The stand-in table and its lookups.
#include "tui/glyph_stand_ins.hpp"

#include <algorithm>
#include <iterator>

#include "core/text/utf8.hpp"

namespace msmon::tui {

namespace {

struct StandIn {
    char32_t glyph;
    char ascii;
};

// Sorted by glyph. Marks that sit in text read as what they mean in ASCII: an arrow as '>', a cut as '~'; a
// mark drawn on a grid (◆ the top incident's origin, • a cell in an incident) as a letter-like shape.
constexpr StandIn kStandIns[] = {
    {U'\u00A0', ' '},                                                                            // no-break space
    {U'\u00B1', '+'},                                                                            // ±
    {U'\u00B5', 'u'},                                                                            // µ
    {U'\u00B7', '.'},                                                                            // ·
    {U'\u00D7', 'x'},                                                                            // ×
    {U'\u00F7', '/'},                                                                            // ÷
    {U'\u2013', '-'},                                                                            // –
    {U'\u2014', '-'},                                                                            // —
    {U'\u2018', '\''}, {U'\u2019', '\''}, {U'\u201C', '"'}, {U'\u201D', '"'}, {U'\u2022', 'o'},  // •
    {U'\u2026', '~'},                                                                            // … (kCutMark)
    {U'\u2190', '<'},                                                                            // ←
    {U'\u2191', '^'},                                                                            // ↑
    {U'\u2192', '>'},                                                                            // →
    {U'\u2193', 'v'},                                                                            // ↓
    {U'\u21B5', '<'},                                                                            // ↵
    {U'\u2212', '-'},                                                                            // − (minus)
    {U'\u2248', '~'},                                                                            // ≈
    {U'\u2260', '#'},                                                                            // ≠
    {U'\u2264', '<'},                                                                            // ≤
    {U'\u2265', '>'},                                                                            // ≥
    {U'\u2591', '?'},                                                                            // ░ unread
    {U'\u25B2', '^'},                                                                            // ▲
    {U'\u25B4', '^'},                                                                            // ▴
    {U'\u25B6', '>'},                                                                            // ▶
    {U'\u25B8', '+'},                                                                            // ▸ a row that opens
    {U'\u25BC', 'v'},                                                                            // ▼
    {U'\u25BE', '-'},  // ▾ a row that is open
    {U'\u25C6', '@'},  // ◆
    {U'\u25CF', 'o'},  // ●
    {U'\u2713', 'v'},  // ✓
    {U'\u2717', 'x'},  // ✗
};

static_assert(std::is_sorted(std::begin(kStandIns), std::end(kStandIns),
                             [](const StandIn& a, const StandIn& b) { return a.glyph < b.glyph; }),
              "kStandIns is searched by glyph");

// Box drawing U+2500..U+257F: lines across '-', lines down '|', anything that joins lines '+'.
constexpr char32_t kAcross[] = {0x2500, 0x2501, 0x2504, 0x2505, 0x2508, 0x2509, 0x254C,
                                0x254D, 0x2550, 0x2574, 0x2576, 0x2578, 0x257A};
constexpr char32_t kDown[] = {0x2502, 0x2503, 0x2506, 0x2507, 0x250A, 0x250B, 0x254E,
                              0x254F, 0x2551, 0x2575, 0x2577, 0x2579, 0x257B};

char box_stand_in(char32_t cp) {
    if (std::find(std::begin(kAcross), std::end(kAcross), cp) != std::end(kAcross)) return '-';
    if (std::find(std::begin(kDown), std::end(kDown), cp) != std::end(kDown)) return '|';
    return '+';
}

}  // namespace

char ascii_stand_in(char32_t cp) {
    if (cp < 0x80) return static_cast<char>(cp);
    if (cp >= 0x2500 && cp <= 0x257F) return box_stand_in(cp);
    // Block elements: the sparkline's ASCII ramp, by height (the lower blocks ▁..█ are U+2581..U+2588).
    if (cp >= 0x2581 && cp <= 0x2588) return "_.:-=+*#"[cp - 0x2581];
    if (cp >= 0x2580 && cp <= 0x259F) return '#';
    // Braille: a plot's dots, '*' as the ASCII chart draws them; the empty pattern is blank.
    if (cp >= 0x2800 && cp <= 0x28FF) return cp == 0x2800 ? ' ' : '*';
    const auto it = std::lower_bound(std::begin(kStandIns), std::end(kStandIns), cp,
                                     [](const StandIn& s, char32_t c) { return s.glyph < c; });
    return it != std::end(kStandIns) && it->glyph == cp ? it->ascii : '?';
}

char32_t glyph(char32_t cp, bool unicode) {
    return unicode ? cp : static_cast<char32_t>(ascii_stand_in(cp));
}

std::string glyph_text(char32_t cp, bool unicode) {
    std::string out;
    append_utf8(out, glyph(cp, unicode));
    return out;
}

}  // namespace msmon::tui
