# Administration au quotidien : blocage après des mots de passe erronés, conservation du journal d’audit, info-bulle du choix des couleurs.

daily-password-locked = Trop de mots de passe erronés. Patientez quelques minutes et réessayez.

setting-audit-retention-days = Conserver le journal d’audit (jours)
setting-audit-retention-days-hint = Les entrées plus anciennes du journal d’audit sont supprimées toutes les heures.

daily-theme-tooltip = Couleurs des pages : claires, sombres ou selon votre système
