//! Reports: tables on stdout, JSON and CSV files, SVG plots.
