// msmon-tui: the terminal UI. The views land with the TUI issue; until then it says so plainly.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc > 1 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
        std::puts("usage: msmon-tui [DIR] [--db PATH] [--demo] [--snapshot VIEW --size WxH]\n"
                  "The terminal UI is not built yet; use `msmon ingest --follow` and `msmon query` meanwhile.");
        return 0;
    }
    std::fputs("msmon-tui: the terminal UI is not built yet; use `msmon ingest DIR --follow` and `msmon query`\n",
               stderr);
    return 1;
}
