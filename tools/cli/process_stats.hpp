// What the process uses, for summaries and `attend bench`.
#pragma once

#include <string>

namespace attend::cli {

double peak_rss_mib();     // high-water mark of resident memory since the start
double current_rss_mib();  // resident memory now (0 if /proc is unavailable)

// Resident memory on 2 MiB pages now (AnonHugePages; 0 if /proc is unavailable), and
// the kernel's transparent-huge-page mode ("always", "madvise" or "never"; "" if
// unknown). attend's packed weights ask for huge pages, which make decoding 5–15%
// faster (docs/performance.md); with "never" they stay on 4 KiB pages.
double huge_page_rss_mib();
std::string transparent_huge_pages_mode();

}  // namespace attend::cli
