// What the process uses, for summaries and `attend bench`.
#pragma once

namespace attend::cli {

double peak_rss_mib();     // high-water mark of resident memory since the start
double current_rss_mib();  // resident memory now (0 if /proc is unavailable)

}  // namespace attend::cli
