// ncurses (wide): newterm on the controlling terminal, short ESC delay, colours unless NO_COLOR, mouse wheel and
// clicks. Unicode glyphs only with a UTF-8 locale.
#include "tui/terminal.hpp"

#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <curses.h>
#include <langinfo.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tui/glyph_stand_ins.hpp"

namespace msmon::tui {

namespace {

constexpr int kPairBase = 1;

int curses_color(Color c, bool rich) {
    switch (c) {
        case Color::none:
            return -1;
        case Color::dim:
            return rich ? 244 : COLOR_WHITE;
        case Color::accent:
            return COLOR_CYAN;
        case Color::good:
            return COLOR_GREEN;
        case Color::warn:
            return COLOR_YELLOW;
        case Color::bad:
            return COLOR_RED;
        case Color::series0:
            return COLOR_CYAN;
        case Color::series1:
            return COLOR_YELLOW;
        case Color::series2:
            return COLOR_MAGENTA;
        case Color::series3:
            return COLOR_GREEN;
        case Color::series4:
            return COLOR_BLUE;
        case Color::series5:
            return COLOR_RED;
        default:
            break;
    }
    // heat0..heat7: a dark-to-bright ramp (256 colours) or the 8 basic colours.
    const int level = static_cast<int>(c) - static_cast<int>(Color::heat0);
    static const int rich_ramp[8] = {17, 19, 25, 31, 37, 71, 178, 196};
    static const int basic_ramp[8] = {COLOR_BLACK, COLOR_BLUE,  COLOR_BLUE,   COLOR_CYAN,
                                      COLOR_GREEN, COLOR_GREEN, COLOR_YELLOW, COLOR_RED};
    return rich ? rich_ramp[level] : basic_ramp[level];
}

constexpr int kColors = static_cast<int>(Color::heat7) + 1;

}  // namespace

Terminal::Terminal(bool colours) {
    std::setlocale(LC_ALL, "");
    const char* codeset = nl_langinfo(CODESET);
    glyphs_.unicode = codeset && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
    ::setenv("ESCDELAY", "25", 0);
    initscr();
    raw();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
    mouseinterval(0);
    const char* no_color = std::getenv("NO_COLOR");
    if (colours && has_colors() && !(no_color && *no_color)) {
        start_color();
        use_default_colors();
        colors_ = true;
        const bool rich = COLORS >= 256;
        // One pair per (fg, bg) combination views use: fg on default, and heat backgrounds.
        for (int f = 0; f < kColors; ++f)
            init_pair(static_cast<short>(kPairBase + f), static_cast<short>(curses_color(static_cast<Color>(f), rich)),
                      -1);
        for (int b = 0; b < 8; ++b)
            init_pair(static_cast<short>(kPairBase + kColors + b), COLOR_WHITE,
                      static_cast<short>(curses_color(static_cast<Color>(static_cast<int>(Color::heat0) + b), rich)));
    }
}

Terminal::~Terminal() {
    endwin();
}

int Terminal::width() const {
    return COLS;
}
int Terminal::height() const {
    return LINES;
}

int Terminal::attr_for(const Style& s) const {
    int a = A_NORMAL;
    if (s.attr & kBold) a |= A_BOLD;
    if (s.attr & kDim) a |= A_DIM;
    if (s.attr & kReverse) a |= A_REVERSE;
    if (s.attr & kUnderline) a |= A_UNDERLINE;
    if (colors_) {
        if (s.bg >= Color::heat0 && s.bg <= Color::heat7)
            a |= COLOR_PAIR(kPairBase + kColors + (static_cast<int>(s.bg) - static_cast<int>(Color::heat0)));
        else if (s.fg != Color::none) a |= COLOR_PAIR(kPairBase + static_cast<int>(s.fg));
    } else {
        // Monochrome: what colour would say, attributes say.
        if (s.fg == Color::bad || s.fg == Color::warn) a |= A_BOLD;
        if (s.fg == Color::dim) a |= A_DIM;
        if (s.bg >= Color::heat4 && s.bg <= Color::heat7) a |= A_REVERSE;
    }
    return a;
}

void Terminal::present(const ScreenBuffer& buf) {
    const int h = std::min(buf.height(), LINES), w = std::min(buf.width(), COLS);
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            const Cell& c = buf.at(x, y);
            const int attr = attr_for(c.style);
            if (!glyphs_.unicode) {
                // No UTF-8: each cell's ASCII stand-in, never raw bytes; a wide character's two halves as "??".
                const char shown = c.ch == 0 ? '?' : ascii_stand_in(c.ch);
                mvaddch(y, x, static_cast<chtype>(static_cast<unsigned char>(shown)) | static_cast<chtype>(attr));
            } else if (c.ch == 0) {
                continue;  // right half of a wide character
            } else if (c.ch < 0x80) {
                mvaddch(y, x, static_cast<chtype>(c.ch) | static_cast<chtype>(attr));
            } else {
                wchar_t wc[2] = {static_cast<wchar_t>(c.ch), L'\0'};
                cchar_t cc;
                setcchar(&cc, wc, static_cast<attr_t>(attr & ~A_COLOR), static_cast<short>(PAIR_NUMBER(attr)), nullptr);
                mvadd_wch(y, x, &cc);
            }
        }
    }
    refresh();
}

int Terminal::read_key(MouseEvent& mouse) {
    wint_t ch = 0;
    const int r = get_wch(&ch);
    if (r == ERR) return kKeyNone;
    if (r == KEY_CODE_YES) {
        switch (ch) {
            case KEY_UP:
                return kKeyUp;
            case KEY_DOWN:
                return kKeyDown;
            case KEY_LEFT:
                return kKeyLeft;
            case KEY_RIGHT:
                return kKeyRight;
            case KEY_PPAGE:
                return kKeyPageUp;
            case KEY_NPAGE:
                return kKeyPageDown;
            case KEY_HOME:
                return kKeyHome;
            case KEY_END:
                return kKeyEnd;
            case KEY_ENTER:
                return kKeyEnter;
            case KEY_BACKSPACE:
                return kKeyBackspace;
            case KEY_DC:
                return kKeyDelete;
            case KEY_BTAB:
                return kKeyBackTab;
            case KEY_RESIZE:
                return kKeyResize;
            case KEY_MOUSE: {
                MEVENT ev;
                if (getmouse(&ev) != OK) return kKeyNone;
                mouse.x = ev.x;
                mouse.y = ev.y;
                if (ev.bstate & BUTTON4_PRESSED) return kKeyWheelUp;
                if (ev.bstate & BUTTON5_PRESSED) return kKeyWheelDown;
                return kKeyMouseClick;
            }
            default:
                return kKeyNone;
        }
    }
    if (ch == 27) return kKeyEscape;
    if (ch == '\n' || ch == '\r') return kKeyEnter;
    if (ch == '\t') return kKeyTab;
    if (ch == 127 || ch == 8) return kKeyBackspace;
    return static_cast<int>(ch);
}

void Terminal::write_raw(const std::string& bytes) {
    std::fflush(stdout);  // curses' own output first: the bytes never land inside one of its sequences
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(STDOUT_FILENO, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the terminal is gone or full: a notification is not worth blocking for
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace msmon::tui
