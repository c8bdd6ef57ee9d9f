# Serveurs de modèles et pools.

backends-title = Serveurs de modèles
backends-intro = Les serveurs de modèles derrière la passerelle, leur capacité et la façon dont la priorité des requêtes leur est transmise.
backend-priority-mode = Transmission de la priorité
backend-priority-auto = Automatique
backend-priority-gateway = Passerelle uniquement
backend-priority-custom = Correspondance manuelle
