"""Result records, the SQLite store, exports."""
