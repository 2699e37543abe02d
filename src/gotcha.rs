//! Gotcha memory: failures by error family, promoted to a gotcha on recurrence in a window.
