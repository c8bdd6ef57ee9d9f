# Day-to-day administration: password lockout on the account page.

daily-password-locked = Too many wrong passwords. Wait a few minutes and try again.
