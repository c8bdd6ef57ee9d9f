# Administration au quotidien : blocage après des mots de passe erronés sur la page du compte.

daily-password-locked = Trop de mots de passe erronés. Patientez quelques minutes et réessayez.
