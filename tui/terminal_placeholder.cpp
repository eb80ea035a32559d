// Placeholder translation unit so the msmon_tui library exists before its views do.
namespace msmon {
int tui_library_version() { return 0; }
}  // namespace msmon
