// Runs before first paint: lets the stylesheet collapse the mobile menu only when scripts run.
document.documentElement.classList.add("js");
