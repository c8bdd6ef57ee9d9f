# Серверы моделей и пулы.

backends-title = Серверы моделей
backends-intro = Серверы моделей за шлюзом, их пропускная способность и то, как им передаётся приоритет запроса.
backend-priority-mode = Передача приоритета
backend-priority-auto = Автоматически
backend-priority-gateway = Только в шлюзе
backend-priority-custom = Ручное сопоставление
