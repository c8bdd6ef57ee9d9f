// Runs before first paint: lets the stylesheet collapse the mobile menu only when scripts run,
// and applies the remembered colour scheme (theme.js), so a dark page never flashes light.
document.documentElement.classList.add("js");
try {
  const theme = localStorage.getItem("aiplane-theme");
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch {
  // Storage can be refused (private modes, policies): the system's preference applies.
}
