// The status line's fields fitted to the screen's width: what is kept when not everything fits.
#pragma once

#include <string>
#include <vector>

namespace msmon::tui {

struct StatusField {
    std::string text;  // empty: not shown
    int rank;          // 0 is kept longest
};

// The fields joined with " | " after a leading space, in their order, in at most `width` columns. Fields are
// taken in rank order (ties in their order): each is kept whole if it fits, else, if its rank is 3 or less (an
// answer, what went wrong, a notice), cut to the columns still free (its end replaced by kCutMark, "~" without
// Unicode) when there are 12 or more, else left out; "inotify, da…" would tell nothing. So one field too
// long for the line (a new incident's notice) is read in part and takes only the room of the fields ranked
// after it, and a field left out does not take the fields ranked after it along. If nothing fits even cut, the
// first by rank is given, cut to the width.
std::string fit_status_fields(const std::vector<StatusField>& fields, int width, bool unicode);

}  // namespace msmon::tui
