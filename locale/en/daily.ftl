# Day-to-day administration: the account page's password lockout, the audit log's retention, the colour switch's tooltip.

daily-password-locked = Too many wrong passwords. Wait a few minutes and try again.

setting-audit-retention-days = Keep audit rows (days)
setting-audit-retention-days-hint = Older rows of the audit log are deleted once an hour.

daily-theme-tooltip = Colours of the pages: light, dark, or as your system prefers
